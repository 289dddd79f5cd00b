#!/bin/bash
# bench/cpu_roles.sh TXBOX [N]: where the CPU of a transaction goes, by process, next to
# bubblewrap's.  Samples (perf record -e cpu-clock, 10 kHz, no call graphs) N runs (default
# 100) of each case in a fresh 100-file workspace: the one-shot one-file change, the one-shot
# `true`, an MCP session of N run_command calls of `true` and, when bwrap is installed, the
# one-file change under `bwrap --ro-bind / / --bind WS WS --dev /dev --proc /proc --tmpfs /tmp
# --unshare-all --die-with-parent` (make bench's baseline).  Prints, per case, the CPU per
# run of each process name, in user space and in the kernel: txbox (the supervisor, or the
# MCP server), txbox-judge (the policy's process), txbox-init (the sandbox's pid 1),
# txbox-program (the program's process until its exec), then the programs (sh, bwrap).
# Sampled CPU attributes less precisely than bench/abrun's task-clock: use it to see which
# process to look at (then perf record -g --call-graph dwarf), and bench/ab.sh to measure a
# change.  Runs as whoever calls it; needs perf (Debian: linux-perf) and a
# kernel.perf_event_paranoid that lets this user sample its own processes (<= 2).
set -eu
TX=$(realpath "$1") N=${2:-100}
command -v perf >/dev/null || { echo "bench/cpu_roles.sh: needs perf (apt-get install linux-perf)" >&2; exit 2; }
d=$(mktemp -d "${TMPDIR:-/var/tmp}/txbox-roles.XXXXXX")
trap 'chmod -R u+rwX "$d" 2>/dev/null; rm -rf "$d"' EXIT
mkdir -p "$d/ws" "$d/state"
for i in $(seq 1 100); do echo "$i" >"$d/ws/f$i"; done
cd "$d/ws"
{
        echo '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}'
        for ((i = 1; i <= N; i++)); do
                echo "{\"jsonrpc\":\"2.0\",\"id\":$i,\"method\":\"tools/call\",\"params\":{\"name\":\"run_command\",\"arguments\":{\"command\":\"true\"}}}"
        done
} >"$d/req"
F=10000
# sample NAME COMMAND: N runs of COMMAND (a shell loop) into $d/NAME.data, after one warm-up.
sample() {
        local name=$1 cmd=$2
        bash -c "$cmd" >/dev/null 2>&1 || true
        perf record -q -o "$d/$name.data" -e cpu-clock -F "$F" -- \
                bash -c "i=0; while [ \$i -lt $N ]; do $cmd; i=\$((i + 1)); done" >/dev/null 2>&1
}
# table NAME RUNS: ms of CPU per run by process name, user and kernel.
table() {
        local name=$1 runs=$2
        echo
        echo "### $name ($runs runs, uid $(id -u))"
        echo
        echo "| process | user ms | kernel ms | total ms |"
        echo "|---|---:|---:|---:|"
        perf script -i "$d/$name.data" -F comm,ip,dso 2>/dev/null |
                awk -v f="$F" -v n="$runs" '
                        { k = ($NF == "([kernel.kallsyms])") ? "k" : "u"; c = $1 }
                        { s[c, k]++; t[c]++; seen[c] = 1; all++ }
                        END { for (c in seen) if (c != "seq") printf "%s\t%.3f\t%.3f\t%.3f\n", c,
                                s[c, "u"] * 1000 / f / n, s[c, "k"] * 1000 / f / n, t[c] * 1000 / f / n
                              printf "(all)\t\t\t%.3f\n", all * 1000 / f / n }' |
                sort -t"$(printf '\t')" -k4,4nr | awk -F'\t' '{ printf "| %s | %s | %s | %s |\n", $1, $2, $3, $4 }'
}
sample change "$TX --state $d/state run -- sh -c 'echo x >>f1'"
sample true "$TX --state $d/state run -- true"
perf record -q -o "$d/mcp.data" -e cpu-clock -F "$F" -- "$TX" --state "$d/state" mcp <"$d/req" >/dev/null 2>&1
if command -v bwrap >/dev/null; then
        sample bwrap "bwrap --ro-bind / / --bind $d/ws $d/ws --dev /dev --proc /proc --tmpfs /tmp --unshare-all --die-with-parent sh -c 'echo x >>f1'"
fi
echo "## CPU by process (bench/cpu_roles.sh, $(date -u '+%Y-%m-%d %H:%M UTC'), load average $(cut -d' ' -f1-3 /proc/loadavg))"
echo
echo "bash: the loop that starts the runs (its forks), about the same in each case; sh: the program."
if [ "$(id -u)" != 0 ] && [ "$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 2)" -ge 2 ]; then
        echo "As uid $(id -u) with kernel.perf_event_paranoid >= 2, perf samples user space only: the"
        echo "kernel column is empty (run as root for it)."
fi
table change "$N"
table true "$N"
table mcp "$N"
[ -f "$d/bwrap.data" ] && table bwrap "$N"
exit 0
