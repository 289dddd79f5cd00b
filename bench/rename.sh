#!/bin/bash
# bench/rename.sh OLD NEW [N]: what renames cost a program inside the sandbox, two txbox
# binaries side by side (e.g. the landed one, which does not stop renames, and the new one),
# and the same program without txbox.  Timed inside the program by bench/renamebench.c:
#   file    us per rename of a file (20,000 back and forth per run): the notification's cost
#   newdir  us per rename of a directory the program made (2,000 per run): the helper's
#   dir     ms for one rename of a 250-file directory of the workspace (the copy-up)
# Runs alternate (old, new, none; N rounds, default 20, after a warm-up) in one workspace
# and state dir per binary under $TMPDIR (else /var/tmp); every run is discarded.  Prints
# the medians.  Runs as whoever calls it.
set -eu
A=$1 B=$2 N=${3:-20}
d=$(mktemp -d "${TMPDIR:-/var/tmp}/txbox-rn.XXXXXX")
trap 'chmod -R u+rwX "$d" 2>/dev/null; rm -rf "$d"' EXIT
cc -O2 -o "$d/rb" "$(dirname "$0")/renamebench.c"
for s in a b c; do
        mkdir -p "$d/$s/ws/big" "$d/$s/state"
        for i in $(seq 1 250); do echo "$i" >"$d/$s/ws/big/f$i.c"; done
done
run() { # side binary args...: one discarded run, its output
        local side=$1 bin=$2
        shift 2
        if [ "$bin" = none ]; then
                (cd "$d/$side/ws" && "$d/rb" "$@" && rm -rf rb.a rb.b rb.d rb.e && { [ -d big ] || mv big2 big; })
        else
                "$bin" -C "$d/$side/ws" --state "$d/$side/state" run --commit=discard -- "$d/rb" "$@" 2>/dev/null
        fi
}
case_all() { # name args...
        local name=$1
        shift
        run a "$A" "$@" >>"$d/old.$name"
        run b "$B" "$@" >>"$d/new.$name"
        run c none "$@" >>"$d/none.$name"
}
for _ in 1 2; do case_all warm file 2000; done
for _ in $(seq 1 "$N"); do
        case_all file file 20000
        case_all newdir newdir 2000
        case_all dir dir big big2
done
med() { grep -E '^[0-9.]+$' "$1" | sort -g | awk '{a[NR] = $1} END {if (NR) print a[int((NR + 1) / 2)]; else print "-"}'; }
what() { grep -vE '^[0-9.]+$' "$1" | sort | uniq -c | sed 's/^ *//' | head -1; }
printf '%-8s %12s %12s %12s\n' case old new none
for c in file newdir dir; do
        printf '%-8s %12s %12s %12s  %s\n' "$c" "$(med "$d/old.$c")" "$(med "$d/new.$c")" "$(med "$d/none.$c")" \
                "$(what "$d/old.$c")"
done
echo "(file, newdir: us per rename; dir: ms; a failure is counted beside the medians)"
