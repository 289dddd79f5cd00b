#!/bin/bash
. "$(dirname "$0")/lib.sh"
new_ws
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@e GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@e
printf '{"name":"app","version":"1.0.0","scripts":{"discard":"git checkout -- .","home":"rm -rf ~","viash":"sh -c \\"git checkout -- .\\""}}' > "$WS/package.json"
git -C "$WS" init -q && git -C "$WS" add -A && git -C "$WS" commit -qm init
echo change >> "$WS/README"
tx run -- npm run -s discard; echo "npm discard (expect 0) rc=$?"; cat "$WS/README"
echo change >> "$WS/README"
tx run -- npm run -s viash; echo "npm viash (expect 0) rc=$?"; cat "$WS/README"
echo change >> "$WS/README"
tx run -- npm run -s home; echo "npm home (expect !=0) rc=$?"
tx run -- node -e "require('child_process').execSync('git checkout -- .')"; echo "node (expect !=0) rc=$?"; cat "$WS/README"
tx run -- sh -c 'git checkout -- .'; echo "sh (expect 123/126) rc=$?"; cat "$WS/README"
done_testing
