#!/bin/bash
# bench/ab.sh OLD NEW [N]: the one-shot transaction of two txbox binaries side by side, for a
# change's note ("a fix that costs the one-shot transaction more than 5 % needs a reason").
# Each binary gets its own 100-file workspace and state dir under $TMPDIR (else /var/tmp);
# the cases alternate (old change, new change, old true, new true, ...) N times (default 200)
# after a warm-up (bench/abrun.c); prints the wall-clock median and p95 and the median CPU
# time of the whole process tree (task-clock, sandboxes included) of each, and new/old.
# Runs as whoever calls it.
set -eu
A=$(realpath "$1") B=$(realpath "$2") N=${3:-200}
cd "$(dirname "$0")/.."
d=$(mktemp -d "${TMPDIR:-/var/tmp}/txbox-ab.XXXXXX")
trap 'chmod -R u+rwX "$d" 2>/dev/null; rm -rf "$d"' EXIT
for s in a b; do
        mkdir -p "$d/$s/ws" "$d/$s/state"
        for i in $(seq 1 100); do echo "$i" >"$d/$s/ws/f$i"; done
done
cc -O2 -o "$d/abrun" bench/abrun.c
run() { # binary side command: one case for abrun
        echo "$1 -C $d/$2/ws --state $d/$2/state run -- $3 >/dev/null 2>&1"
}
"$d/abrun" -q -w 5 -t "$d/tsv" "$N" \
        "old change=$(run "$A" a "sh -c 'echo \$ABRUN_RUN >>f1'")" \
        "new change=$(run "$B" b "sh -c 'echo \$ABRUN_RUN >>f1'")" \
        "old true=$(run "$A" a true)" \
        "new true=$(run "$B" b true)"
for c in change true; do
        awk -F'\t' -v c="$c" '$1 == "old " c { m = $2; p = $6; u = $7 } $1 == "new " c { M = $2; P = $6; U = $7 }
                END { printf "%s: median old %.2f ms, new %.2f ms, new/old %.3f; p95 %.2f, %.2f ms, %.3f; CPU %.2f, %.2f ms, %.3f\n",
                        c, m, M, M / m, p, P, P / p, u, U, U / u }' "$d/tsv"
done
echo "(N=$N, uid $(id -u), load average $(cut -d' ' -f1-3 /proc/loadavg) at the end)"
