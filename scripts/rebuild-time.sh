#!/bin/bash
# scripts/rebuild-time.sh [HEADER...]: what a developer waits for after touching a header
# (issue 35: under 5 s on 2 cores for each header of src/lib/base/ and include/txbox.h).
# Brings $BUILD up to date with `make -j$JOBS all` (a clean tree is built first), then for each
# header (default: src/lib/base/*.h include/txbox.h) touches it and times `make -j$JOBS all`.
# Prints a markdown table: the header, the objects of make all that depend on it (their .d
# files in $BUILD: the release and test variants, the generator; not the unit tests' and fuzz
# replays', which make test-bins builds), the objects compiled and the programs or archives
# made by the rebuild, its wall time and the CPU time (user + system) it took, in seconds.
# The first row touches nothing: what an up-to-date make all costs.  BUILD, JOBS, MAKE, CC
# from the environment.  Other work on the machine stretches the wall time, not much the
# CPU time; the load average goes on the last line.
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
JOBS=${JOBS:-2}
MAKE=${MAKE:-make}
[ $# -gt 0 ] || set -- src/lib/base/*.h include/txbox.h
for h in "$@"; do [ -f "$h" ] || { echo "rebuild-time: no header '$h'" >&2; exit 2; }; done
log=$(mktemp "${TMPDIR:-/var/tmp}/txbox-rebuild.XXXXXX")
trap 'rm -f "$log" "$log.time"' EXIT

TIMEFORMAT='%R %U %S'
mk() { # the make, timed into $log.time: wall, user, system (bash's time counts its children)
        { time $MAKE -j"$JOBS" BUILD="$BUILD" ${CC:+CC="$CC"} all >"$log" 2>&1 || { cat "$log" >&2; exit 1; }; } \
                2>"$log.time"
}
mk
# A second run must do nothing: if it did, every figure below would include it.
mk
grep -q "Nothing to be done\|is up to date" "$log" ||
        echo "rebuild-time: make all is not idempotent here (it redid: $(grep -c . "$log") lines)" >&2

row() { # header or "(nothing)"
        local h=$1 deps=- cc made
        if [ "$h" != "(nothing)" ]; then
                deps=$(find "$BUILD" \( -path "$BUILD/tests" -o -path "$BUILD/fuzz" \) -prune -o -name '*.d' \
                        -exec grep -l -- "[ :]$h\( \|\$\)" {} + 2>/dev/null | wc -l)
                touch "$h"
        fi
        mk
        # compiles carry -c; links and archives name their output with -o or rcs
        cc=$(grep -c -- ' -c ' "$log" || true)
        made=$(grep -v -- ' -c ' "$log" | grep -cE -- '(^| )(-o|rcs) ' || true)
        printf '| %s | %s | %s | %s | %s |\n' "$h" "$deps" "$cc" "$made" \
                "$(awk '{ printf "%.1f | %.1f", $1, $2 + $3 }' "$log.time")"
}
echo "| header touched | objects depending on it | compiled | linked or archived | wall s | CPU s |"
echo "|---|---:|---:|---:|---:|---:|"
row "(nothing)"
for h in "$@"; do row "$h"; done
echo
echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, make -j$JOBS all in $BUILD, $($MAKE -v | head -1), $(${CC:-cc} --version | head -1); load average$(uptime | sed 's/.*load average//')"
