#!/bin/bash
# What the sandbox guarantees: read-only system, private /tmp, hidden secrets and state dir,
# own pid/uts/network namespaces, no capabilities, nothing outlives the transaction.
. "$(dirname "$0")/lib.sh"

new_ws
# These checks are about the sandbox, not the policy: an allow-all policy keeps the policy
# from refusing the probes first (t_policy.sh covers the policy).
printf 'version: 1\ndefaults: false\nrules: []\n' >"$T/allow-all.yml"
txa() { "$TXBOX" -C "$WS" --policy "$T/allow-all.yml" "$@"; }
mkdir -p "$HOME/.ssh" "$HOME/.aws" "$HOME/.config/gcloud"
echo "PLANTED-SECRET-KEY" >"$HOME/.ssh/id_rsa"
echo "PLANTED-SECRET-AWS" >"$HOME/.aws/credentials"
echo "machine x login y password PLANTED-SECRET-NETRC" >"$HOME/.netrc"
echo "PLANTED-SECRET-GIT" >"$HOME/.git-credentials"
echo keep >"$T/outside.txt"

out=$(tx run -- sh -c "echo x >'$T/outside.txt'; echo y >'$T/new-outside'" 2>&1)
ok "writing outside the workspace fails" test $? -ne 0
is "$(cat "$T/outside.txt")" "keep" "a file outside the workspace is unchanged"
ok "no file appears outside the workspace" test ! -e "$T/new-outside"

out=$(tx run -- sh -c 'cat ~/.ssh/id_rsa ~/.aws/credentials ~/.netrc ~/.git-credentials; ls -A ~/.ssh ~/.aws' 2>&1)
ok "secrets read nothing" test -z "$(printf '%s' "$out" | grep PLANTED)"
is "$(tx run -- sh -c 'ls -A ~/.ssh | wc -l')" 0 "~/.ssh is empty inside"
is "$(tx run -- sh -c 'ls -A ~/.local/state/txbox 2>/dev/null | wc -l')" 0 "the state dir is invisible inside"

is "$(tx run -- sh -c 'ls -A /tmp | wc -l')" 0 "/tmp is private and empty"
tx run -- sh -c 'echo t >/tmp/private && cat /tmp/private >/dev/null'
ok "/tmp writes stay in the sandbox" test ! -e /tmp/private
is "$(tx run -- sh -c 'ls -A /dev/shm | wc -l')" 0 "/dev/shm is private and empty"
ok "/dev/null is usable" tx run -- sh -c 'echo x >/dev/null && head -c 4 /dev/urandom | wc -c | grep -q 4'

is "$(tx run -- sh -c 'echo $$')" 2 "own pid namespace (the program is pid 2 under txbox's init)"
ok "only the sandbox's processes are visible" test "$(tx run -- sh -c 'ls /proc | grep -c "^[0-9]"')" -le 4
is "$(tx run -- hostname)" "txbox" "own uts namespace"
is "$(tx run -- id -u)" "$(id -u)" "the program runs as the caller's uid"
is "$(tx run -- sh -c 'grep CapEff /proc/self/status | tr -d "\t "')" "CapEff:0000000000000000" "no capabilities"
is "$(tx run -- sh -c 'grep NoNewPrivs /proc/self/status | tr -d "\t "')" "NoNewPrivs:1" "no_new_privs is set"
err=$(txa run -- sh -c "umount '$WS' 2>&1; echo umount=\$?")
like "$err" "umount=[1-9]" "the program cannot unmount the overlay"

is "$(tx run -- sh -c 'grep -c : /proc/net/dev')" 1 "--net=none: only a loopback interface"
err=$(txa run -- bash -c 'echo >/dev/tcp/127.0.0.1/9' 2>&1)
like "$err" "unreachable" "--net=none: loopback is down"
err=$(txa run --net=loopback -- bash -c 'echo >/dev/tcp/127.0.0.1/9' 2>&1)
like "$err" "refused" "--net=loopback: loopback is up"

# Secret-looking environment variables are withheld unless passed by name.
is "$(GITHUB_TOKEN=t0ken txa run --report="$T/env.json" -- sh -c 'echo ${GITHUB_TOKEN:-withheld}')" "withheld" "a *TOKEN* variable is withheld"
like "$(cat "$T/env.json")" '"env_dropped": \[[^]]*"GITHUB_TOKEN"' "the report names the withheld variable"
like "$(GITHUB_TOKEN=t0ken txa run -v -- true 2>&1)" 'withheld from its environment: GITHUB_TOKEN \(--env NAME passes one\)' \
        "run -v names it too"
is "$(GITHUB_TOKEN=t0ken txa run --env=GITHUB_TOKEN -- sh -c 'echo ${GITHUB_TOKEN:-withheld}')" "t0ken" "--env NAME passes it"
is "$(HARMLESS=yes txa run -- sh -c 'echo $HARMLESS')" "yes" "other variables pass through"
# A per-transaction disk limit from the command line.
txa run --max-disk=8M --timeout=20 -- sh -c 'head -c 64000000 /dev/zero >big.bin' >/dev/null 2>&1
ok "--max-disk: a disk filler does not commit (status $?)" test ! -e "$WS/big.bin"
err=$(txa run --max-disk=lots -- true 2>&1)
is "$?" 125 "--max-disk with a bad size: 125"

# Nothing outlives the transaction: a background daemon is killed when the program ends.
tx run -- sh -c 'sleep 300 & echo started' >/dev/null
sleep 0.2
ok "a background process is killed with the transaction" test -z "$(pgrep -f 'sleep 300')"
# ... and the sandbox dies with its supervisor.
"$TXBOX" -C "$WS" run -- sh -c 'sleep 301' &
pid=$!
sleep 0.5
kill -9 "$pid"
wait "$pid" 2>/dev/null
sleep 0.3
ok "the sandbox dies with a killed supervisor" test -z "$(pgrep -f 'sleep 301')"
tx recover >/dev/null
# A fork bomb ends with the transaction.  Process limits per transaction come with the
# isolation hardening; until then the bomb runs only where RLIMIT_NPROC binds (not for
# root, whom the kernel exempts), so it cannot hurt the machine running the tests.
if [ "$(id -u)" -ne 0 ]; then
        (ulimit -u 300; txa run --timeout=1 -- sh -c 'b() { b | b & }; b; sleep 10' >/dev/null 2>&1)
        is "$?" 124 "a fork bomb is killed at the timeout"
        sleep 0.3
        ok "no process of the fork bomb is left" test "$(ps -e -o comm= | grep -c '^sh$')" -le 3
else
        skip "fork bomb" "root is exempt from RLIMIT_NPROC; runs in the unprivileged pass"
fi

done_testing
