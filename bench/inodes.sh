#!/bin/bash
# bench/inodes.sh TXBOX: the inodes transactions make and free on the state dir's file system
# (perf's ext4:ext4_allocate_inode and ext4:ext4_free_inode tracepoints, counted for the
# whole process tree of each case, the kernel's work for it included: the overlay mount).
# On ext4 without a journal every allocation skips the inodes freed in the last minutes one
# by one (recently_deleted): the count is a cost of its own.  An MCP session's count includes
# the two transactions its server prepares ahead and discards at its end.  A 100-file
# workspace under $TMPDIR (else /var/tmp); after warm-ups, ten one-file changes, ten `true`
# runs, and an MCP session of ten calls of `true`.
set -eu
B=$(realpath "$1")
d=$(mktemp -d "${TMPDIR:-/var/tmp}/txbox-inodes.XXXXXX")
trap 'chmod -R u+rwX "$d" 2>/dev/null; rm -rf "$d"' EXIT
mkdir -p "$d/ws" "$d/state"
for i in $(seq 1 100); do echo "$i" >"$d/ws/f$i"; done
count() { # shell command: "allocated freed"
        perf stat -x, -e ext4:ext4_allocate_inode -e ext4:ext4_free_inode -- sh -c "$1" 2>&1 >/dev/null |
                awk -F, '{ printf "%s ", $1 }'
}
run="$B -C $d/ws --state $d/state run --"
ten() { echo "for i in 1 2 3 4 5 6 7 8 9 10; do $*; done"; }
for i in 1 2 3; do $run sh -c 'echo x >>f1' >/dev/null; $run true >/dev/null; done
echo "10 one-file changes, inodes allocated, freed: $(count "$(ten "$run sh -c 'echo x >>f1'")")"
echo "10 runs of true:                             $(count "$(ten "$run true")")"
{
        echo '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}'
        for i in $(seq 1 10); do
                echo "{\"jsonrpc\":\"2.0\",\"id\":$i,\"method\":\"tools/call\",\"params\":{\"name\":\"run_command\",\"arguments\":{\"command\":\"true\"}}}"
        done
} >"$d/req"
"$B" -C "$d/ws" --state "$d/state" mcp <"$d/req" >/dev/null
echo "an MCP session of 10 calls of true:          $(count "$B -C $d/ws --state $d/state mcp <$d/req")"
