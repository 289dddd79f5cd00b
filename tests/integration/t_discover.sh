#!/bin/bash
# Finding the workspace (issue 31): without -C, every verb takes the nearest directory from
# the current one up that holds .txbox, .git (a directory or a file) or .claude, or that
# already has transactions; the program runs in the caller's subdirectory; read-only verbs
# make no state dir; the home directory is never found as one; the search stops at a mount.
. "$(dirname "$0")/lib.sh"

X="$T/bin/txbox"
STATE="$HOME/.local/state/txbox"
rm -rf "$STATE"
mkdir -p "$T/proj/.git" "$T/proj/newsrc/deep" && echo top0 >"$T/proj/top0.txt"

cd "$T/proj/newsrc" || exit 1
out=$("$X" log 2>&1)
is "$?" 0 "log in a project without transactions"
like "$out" "no transactions in workspace '$T/proj' yet" "names the project found above, not the subdirectory"
ok "and makes no state dir" test ! -e "$STATE"
"$X" show >/dev/null 2>&1
is "$?" 1 "show with no transactions: refused"
"$X" diff >/dev/null 2>&1
is "$?" 1 "diff with no transactions: refused"
"$X" report >/dev/null 2>&1
"$X" recover >/dev/null 2>&1
"$X" gc --dry-run >/dev/null 2>&1
ok "report, recover and gc --dry-run make none either" test ! -e "$STATE"

out=$("$X" run -- sh -c 'echo x > ../top.txt; pwd')
is "$?" 0 "from the subdirectory, a write to the project's top commits"
is "$out" "$T/proj/newsrc" "and the program starts in the subdirectory"
is "$(cat "$T/proj/top.txt")" "x" "the file is in the project"
id=$("$X" log --json -n 1 | grep -o '"tx": "[0-9a-f]*"' | cut -d'"' -f4)
like "$("$X" show --json "$id")" "\"cwd\": \"$T/proj/newsrc\"" "the record keeps the caller's directory"
is "$(cd "$T/proj" && "$X" log --json -n 1 | grep -o '"tx": "[0-9a-f]*"' | cut -d'"' -f4)" "$id" \
        "the project's top sees the same log"
is "$(cd "$T/proj/newsrc/deep" && "$X" log --json -n 1 | grep -o '"tx": "[0-9a-f]*"' | cut -d'"' -f4)" "$id" \
        "and so does a deeper directory"
is "$(ls "$STATE" | grep -c '^proj-')" 1 "one state dir, the project's"
like "$("$X" check -c 'rm -rf ..')" '^deny \(rm-root\)' "check judges against the project: .. is the whole workspace"
like "$("$X" -C "$T/proj/newsrc" log 2>&1)" "no transactions in workspace '$T/proj/newsrc'" \
        "-C names the workspace as given, without a search"

# .git as a file (a worktree, a submodule), .txbox, .claude
mkdir -p "$T/wt/sub" "$T/tb/sub" "$T/cl/sub"
echo "gitdir: $T/proj/.git/worktrees/wt" >"$T/wt/.git"
mkdir "$T/tb/.txbox" "$T/cl/.claude"
for d in wt tb cl; do
        like "$(cd "$T/$d/sub" && "$X" log 2>&1)" "no transactions in workspace '$T/$d' yet" "found by its mark: $d"
done
# The nearest mark wins: a nested repository is its own workspace.
mkdir -p "$T/proj/vendor/lib/.git" "$T/proj/vendor/lib/src"
like "$(cd "$T/proj/vendor/lib/src" && "$X" log 2>&1)" "workspace '$T/proj/vendor/lib' yet" "the nearest mark wins"

# A symlinked current directory: the physical path is searched, as getcwd gives it.
ln -s "$T/proj" "$T/projlink"
is "$(cd "$T/projlink/newsrc" && "$X" log --json -n 1 | grep -o '"tx": "[0-9a-f]*"' | cut -d'"' -f4)" "$id" \
        "through a symlink, the same project"

# No mark anywhere: the current directory, and it says so once; then its subdirectories
# find it by its state dir.
mkdir -p "$T/plain/sub/deeper"
cd "$T/plain/sub" || exit 1
"$X" run -- sh -c 'echo p > p.txt' 2>"$T/err"
is "$?" 0 "a run where nothing is marked"
like "$(cat "$T/err")" "^txbox: new workspace '$T/plain/sub' \(the current directory: no directory from here up to" \
        "says which directory became the workspace"
"$X" run -- true 2>"$T/err"
is "$(cat "$T/err")" "" "once"
is "$(cd deeper && "$X" log --json | grep -o '"tx": "[0-9a-f]*"' | wc -l)" 2 \
        "a subdirectory finds the workspace by its state dir"
like "$(cd .. && "$X" log 2>&1)" "no transactions in workspace '$T/plain' yet" "its parent is not it"

# The home directory is never a workspace by discovery.
cd "$HOME" || exit 1
mkdir -p .git
out=$("$X" run -- true 2>&1)
is "$?" 125 "a run in the home directory is refused"
like "$out" "your home directory" "saying why"
like "$("$X" log 2>&1)" "no transactions in workspace '$HOME' yet" "log there lists none"
mkdir -p "$HOME/p/q"
like "$(cd "$HOME/p/q" && "$X" log 2>&1)" "workspace '$HOME/p/q' yet" "its .git is no mark for a directory beneath it"
rmdir .git

# A mount between here and a mark: the search stops at it (git's rule).
if unshare -rm true 2>/dev/null; then
        mkdir -p "$T/proj/mnt"
        out=$(unshare -rm sh -c 'mount -t tmpfs none "$1/proj/mnt" && mkdir "$1/proj/mnt/in" && cd "$1/proj/mnt/in" &&
                "$2" log 2>&1; echo "--"; TXBOX_DISCOVERY_ACROSS_FILESYSTEM=1 "$2" log 2>&1' sh "$T" "$X")
        like "$out" "workspace '$T/proj/mnt/in' yet \(the current directory: no directory from here up to the mount point $T/proj/mnt holds" \
                "a mount stops the search"
        like "$(printf '%s\n' "$out" | sed -n '/^--$/,$p')" "^$id " "TXBOX_DISCOVERY_ACROSS_FILESYSTEM=1 crosses it"
else
        skip "a mount stops the search" "no unshare -rm here"
        skip "TXBOX_DISCOVERY_ACROSS_FILESYSTEM=1 crosses it" "no unshare -rm here"
fi

done_testing
