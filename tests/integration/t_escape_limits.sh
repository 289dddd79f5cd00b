#!/bin/bash
# Escape suite, resources: fork bomb, memory hog, disk fill, infinite loop, CPU burn, open
# files.  Each ends at its per-transaction limit, is rolled back, and leaves the host as it was.
# Limits are set through txbox's environment (TXBOX_LIMIT_*), small enough for CI.
. "$(dirname "$0")/lib.sh"

new_ws
is "$(tx run -- echo alive 2>&1)" alive "txbox runs here (the attempts below are meaningful)"
before=$(tree_hash "$WS")
# The limits are what is tested here, not the policy (which refuses a literal fork bomb
# before it runs): run under an allow-all policy.
printf 'version: 1\ndefaults: false\nrules: []\n' >"$T/allow-all.yml"
lim() {
        local bin=$1
        shift
        env TXBOX_LIMIT_PROCS=200 TXBOX_LIMIT_MEMORY=256M TXBOX_LIMIT_DISK=32M "$bin" --policy "$T/allow-all.yml" "$@"
}

is "$(lim "$TXBOX" -C "$WS" run -- cat /proc/sys/kernel/pid_max)" 301 "the sandbox's pid namespace has its own pid_max"

# Fork bomb: forks fail at the pid limit (root included), the timeout ends the rest.  The
# bomb goes off in a subshell and the shell then execs sleep: with `b; sleep 10` the shell's
# own fork of the pipeline or of sleep could fail at the limit (exit 2, 1 run in 5 here).
start=$(date +%s)
lim "$TXBOX" -C "$WS" run --timeout=3 -- sh -c '(b() { b | b & }; b); exec sleep 10' >/dev/null 2>&1
is "$?" 124 "a fork bomb ends at the timeout"
ok "... within seconds" test $(($(date +%s) - start)) -le 8
sleep 0.3
ok "no process of the fork bomb is left" test "$(ps -e -o comm= | grep -c '^sh$')" -le 3
out=$(lim "$TXBOX" -C "$WS" run -- python3 -c '
import os, time
n = 0
try:
    while n < 1000:
        if os.fork() == 0:
            time.sleep(3); os._exit(0)
        n += 1
except OSError:
    pass
print(n)' 2>/dev/null)
ok "at most the limit of processes exist at once ($out)" test "${out:-999}" -le 300

# Memory: one process hits RLIMIT_DATA; many together hit init's resident-memory total.
out=$(lim "$TXBOX" -C "$WS" run -- python3 -c 'b = bytearray(1 << 30); print("allocated")' 2>&1)
ok "a 1 GiB allocation fails under a 256 MiB limit" test -z "$(printf '%s' "$out" | grep allocated)"
lim "$TXBOX" -C "$WS" run --timeout=20 -- sh -c 'for i in 1 2 3 4 5 6; do python3 -c "
import time; b = bytearray(100 << 20); time.sleep(15)" & done; wait' >/dev/null 2>&1
is "$?" 137 "six processes of 100 MiB each are killed together (memory total)"

# Disk: the supervisor measures the upper layer; one big file also meets RLIMIT_FSIZE.
avail0=$(df -k --output=avail "$T" | tail -1)
lim "$TXBOX" -C "$WS" run -- sh -c 'for i in $(seq 200); do head -c 1048576 /dev/zero >f$i || exit 1; done; sleep 2' >/dev/null 2>&1
rc=$?
ok "filling the disk with many files is stopped (status $rc)" test "$rc" -ne 0
lim "$TXBOX" -C "$WS" run -- sh -c 'head -c 100000000 /dev/zero >big' >/dev/null 2>&1
rc=$?
ok "one big file stops at the limit (status $rc)" test "$rc" -ne 0
avail1=$(df -k --output=avail "$T" | tail -1)
ok "the host's free space is unchanged after rollback ($avail0 -> $avail1 KiB)" test $((avail0 - avail1)) -lt 8192
is "$(tree_hash "$WS")" "$before" "the workspace is unchanged"
ok "no pending transaction keeps the data" test -z "$(find "$HOME/.local/state" -name 'f1*' -o -name big 2>/dev/null | head -1)"

# Time: the wall-clock timeout and the CPU limit.
"$TXBOX" -C "$WS" run --timeout=1 -- sh -c 'while :; do :; done' >/dev/null 2>&1
is "$?" 124 "an infinite loop ends at --timeout"
TXBOX_LIMIT_CPU=1 "$TXBOX" -C "$WS" run --timeout=20 -- sh -c 'while :; do :; done' >/dev/null 2>&1
is "$?" 152 "a CPU burn ends at the CPU limit (SIGXCPU)"

# Open files.
out=$(TXBOX_LIMIT_FILES=64 "$TXBOX" -C "$WS" run -- sh -c 'ulimit -n')
is "$out" 64 "open files are limited"

done_testing
