#!/bin/bash
# bench/ab.sh OLD NEW [N]: the one-shot transaction of two txbox binaries side by side, for a
# change's note ("a fix that costs the one-shot transaction more than 5 % needs a reason").
# Each binary gets its own 100-file workspace and state dir under $TMPDIR (else /var/tmp);
# the cases alternate (old change, new change, old true, new true, ...) N times (default 200)
# after a warm-up; prints the medians and new/old.  Runs as whoever calls it.
set -eu
A=$1 B=$2 N=${3:-200}
d=$(mktemp -d "${TMPDIR:-/var/tmp}/txbox-ab.XXXXXX")
trap 'chmod -R u+rwX "$d" 2>/dev/null; rm -rf "$d"' EXIT
for s in a b; do
        mkdir -p "$d/$s/ws" "$d/$s/state"
        for i in $(seq 1 100); do echo "$i" >"$d/$s/ws/f$i"; done
done
run() { # binary side command...
        local bin=$1 side=$2 t0
        shift 2
        t0=$(date +%s%N)
        "$bin" -C "$d/$side/ws" --state "$d/$side/state" run -- "$@" >/dev/null 2>&1
        echo $((($(date +%s%N) - t0) / 1000))
}
for _ in 1 2 3 4 5; do run "$A" a true >/dev/null; run "$B" b true >/dev/null; done
for i in $(seq 1 "$N"); do
        run "$A" a sh -c "echo $i >>f1" >>"$d/a.change"
        run "$B" b sh -c "echo $i >>f1" >>"$d/b.change"
        run "$A" a true >>"$d/a.true"
        run "$B" b true >>"$d/b.true"
done
med() { sort -n "$1" | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
for c in change true; do
        ma=$(med "$d/a.$c") mb=$(med "$d/b.$c")
        echo "$c: old ${ma} us, new ${mb} us, new/old $(awk -v a="$ma" -v b="$mb" 'BEGIN {printf "%.3f", b / a}')"
done
