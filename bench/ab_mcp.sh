#!/bin/bash
# bench/ab_mcp.sh OLD NEW [N] [CALLS]: the MCP server path of two txbox binaries side by side.
# Each binary gets its own 100-file workspace and state dir under $TMPDIR (else /var/tmp); the
# cases alternate (bench/abrun.c) N times (default 20): a session of CALLS (default 20)
# run_command calls of `true` on a pipe to `txbox mcp`, and the same session with initialize
# only, so that (session - initialize only) / CALLS is what one call costs, wall and CPU (the
# task-clock of the whole tree: the server, its sandboxes).  Prints the table and, per call,
# both binaries and new/old.  Runs as whoever calls it.
set -eu
A=$(realpath "$1") B=$(realpath "$2") N=${3:-20} C=${4:-20}
cd "$(dirname "$0")/.."
d=$(mktemp -d "${TMPDIR:-/var/tmp}/txbox-abmcp.XXXXXX")
trap 'chmod -R u+rwX "$d" 2>/dev/null; rm -rf "$d"' EXIT
for s in a b; do
        mkdir -p "$d/$s/ws" "$d/$s/state"
        for i in $(seq 1 100); do echo "$i" >"$d/$s/ws/f$i"; done
done
{
        echo '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}'
        for ((i = 1; i <= C; i++)); do
                echo "{\"jsonrpc\":\"2.0\",\"id\":$i,\"method\":\"tools/call\",\"params\":{\"name\":\"run_command\",\"arguments\":{\"command\":\"true\"}}}"
        done
} >"$d/req"
head -1 "$d/req" >"$d/req0"
cc -O2 -o "$d/abrun" bench/abrun.c
mcp() { # binary side requests
        echo "$1 -C $d/$2/ws --state $d/$2/state mcp <$d/$3 >/dev/null"
}
"$d/abrun" -c -w 2 -t "$d/tsv" "$N" \
        "old calls=$(mcp "$A" a req)" "new calls=$(mcp "$B" b req)" \
        "old initialize=$(mcp "$A" a req0)" "new initialize=$(mcp "$B" b req0)"
awk -F'\t' -v c="$C" '{ w[$1] = $2; u[$1] = $7 }
        END { ow = (w["old calls"] - w["old initialize"]) / c; nw = (w["new calls"] - w["new initialize"]) / c
                ou = (u["old calls"] - u["old initialize"]) / c; nu = (u["new calls"] - u["new initialize"]) / c
                printf "per call: wall old %.2f ms, new %.2f ms, new/old %.3f; CPU old %.3f ms, new %.3f ms, new/old %.3f\n",
                        ow, nw, nw / ow, ou, nu, nu / ou }' "$d/tsv"
echo "(N=$N sessions of $C calls, uid $(id -u), load average $(cut -d' ' -f1-3 /proc/loadavg) at the end)"
