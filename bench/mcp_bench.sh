#!/bin/bash
# bench/mcp_bench.sh [N]: per-command cost of `true` through txbox mcp (the official MCP SDK
# client, one long-lived server), one-shot `txbox run`, and bare execution, in the same run.
# Prints the median (and p90) milliseconds per command of each.  Runs only `true`, in a
# throwaway workspace under /var/tmp.  The SDK column needs node and npm (tests/mcp/setup.sh
# installs the SDK into ${TMPDIR:-/var/tmp}/txbox-mcp-sdk-cache); a raw JSON-RPC pipe column does not.
set -u
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
N=${1:-200}
TXBOX="$PWD/$BUILD/txbox"
[ -x "$TXBOX" ] || { echo "mcp_bench: build $TXBOX first (make)" >&2; exit 1; }
D=$(mktemp -d "${TMPDIR:-/var/tmp}/txbox-mcpbench.XXXXXX") || exit 1
# overlayfs leaves its work/work without permissions: as a user, rm alone cannot descend.
trap 'chmod -R u+rwX "$D" 2>/dev/null; rm -rf "$D"' EXIT
mkdir -p "$D/ws" "$D/state"
for i in $(seq 1 50); do echo "file $i" >"$D/ws/f$i.txt"; done
TX=("$TXBOX" -C "$D/ws" --state "$D/state")
# Each method starts from an empty audit log: the cost per command grows with the number
# of transactions already in the state dir, which would favour whichever runs first.
fresh() { chmod -R u+rwX "$D/state" 2>/dev/null; rm -rf "$D/state" && mkdir -p "$D/state"; }

stats() { # name: read milliseconds, one per line, on stdin
        sort -n | awk -v name="$1" '{ v[NR] = $1 } END {
                if (NR == 0) { printf "%-34s (no samples)\n", name; exit }
                m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
                printf "%-34s median %8.3f ms   p90 %8.3f ms   (n=%d)\n", name, m, v[int(NR * 0.9 + 0.5)], NR }'
}
loop() { # time each of N runs of a command, in ms
        local i t0 t1
        for ((i = 0; i < N; i++)); do
                t0=$EPOCHREALTIME
                "$@" >/dev/null 2>&1
                t1=$EPOCHREALTIME
                echo "${t0/./} ${t1/./}"
        done | awk '{ printf "%.3f\n", ($2 - $1) / 1000 }'
}

echo "per-command cost of 'true' (N=$N, $(nproc) CPUs, $(uname -r), uid $(id -u))"
loop sh -c true | stats "bare: sh -c true"
fresh
loop "${TX[@]}" run -- sh -c true | stats "one-shot: txbox run -- sh -c true"

# Raw JSON-RPC through a pipe: N run_command requests to one server, amortised (includes
# the server's start once).
req() {
        echo '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}'
        for ((i = 1; i <= N; i++)); do
                echo "{\"jsonrpc\":\"2.0\",\"id\":$i,\"method\":\"tools/call\",\"params\":{\"name\":\"run_command\",\"arguments\":{\"command\":\"true\"}}}"
        done
}
req >"$D/req"
fresh
t0=$EPOCHREALTIME
"${TX[@]}" mcp <"$D/req" >"$D/resp" 2>/dev/null
t1=$EPOCHREALTIME
ok=$(grep -c '"status": *0' "$D/resp")
awk -v a="${t0/./}" -v b="${t1/./}" -v n="$N" -v ok="$ok" \
        'BEGIN { printf "%-34s mean   %8.3f ms   (%d/%d committed)\n", "mcp: raw JSON-RPC pipe", (b - a) / 1000 / n, ok, n }'

SDK=${TMPDIR:-/var/tmp}/txbox-mcp-sdk-cache
if why=$(tests/mcp/setup.sh "$SDK" 2>&1); then
        fresh
        (cd "$D" && node "$SDK/client.mjs" bench "$N" "${TX[@]}" mcp 2>/dev/null) | stats "mcp: SDK client callTool"
else
        echo "mcp: SDK client: skipped: $why"
fi
