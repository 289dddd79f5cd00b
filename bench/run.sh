#!/bin/bash
# make bench: side-by-side timings (alternating runs, medians, ratios to the baseline).
# Writes a markdown table to stdout; docs/BENCHMARKS.md records the figures with this command.
set -eu
cd "$(dirname "$0")/.."
ROOT=$(pwd)
BUILD=${BUILD:-build}
N=${BENCH_N:-20}
cc -O2 -o "$BUILD/abrun" bench/abrun.c
ABRUN="$(pwd)/$BUILD/abrun"
dir=$(mktemp -d /var/tmp/txbox-bench.XXXXXX)
trap 'chmod -R u+rwX "$dir"; rm -rf "$dir"' EXIT
mkdir -p "$dir/ws" "$dir/home"
for i in $(seq 1 100); do echo "$i" >"$dir/ws/f$i"; done
TX="$(pwd)/$BUILD/txbox"
export HOME="$dir/home"
cd "$dir/ws"
echo "## txbox run vs bare exec and bubblewrap ($N runs each, alternating; $(nproc) cpus, $(uname -r))"
echo
args=("sh -c true=true")
if command -v bwrap >/dev/null; then
        args+=("bwrap (same isolation, no transaction)=bwrap --ro-bind / / --bind $dir/ws $dir/ws --dev /dev --proc /proc --tmpfs /tmp --unshare-all --die-with-parent true")
fi
args+=("txbox run -- true=$TX run -- true")
args+=("txbox run, one-file change committed=$TX run -- sh -c 'echo x >>f1'")
"$ABRUN" "$N" "${args[@]}"

# Through the MCP server (one long-lived server, N commands), next to one-shot runs and
# bare exec, from bench/mcp_bench.sh.
echo
echo "## Per command through txbox mcp"
echo
BUILD="$BUILD" "$ROOT/bench/mcp_bench.sh" "$N" 2>&1 | sed 's/^/    /' || true
