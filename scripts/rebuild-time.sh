#!/bin/bash
# scripts/rebuild-time.sh [HEADER...]: what a developer waits for after touching a header
# (issue 35: under 5 s on 2 cores for each header of src/lib/base/ and include/txbox.h).
# Brings $BUILD up to date with `make -j$JOBS all` (a clean tree is built first), then for each
# header (default: src/lib/base/*.h include/txbox.h) touches it and times `make -j$JOBS all`.
# Prints a markdown table: the header, the objects that depend on it ($BUILD/**/*.d, which
# make all wrote: the release and test variants, the unit tests, the generator), the objects
# compiled and the programs or archives made by the rebuild, and its wall time in seconds.
# The first row touches nothing: what an up-to-date make all costs.  BUILD, JOBS, MAKE, CC
# from the environment.  The machine's load goes on the last line: figures from a loaded
# machine are not comparable.
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
JOBS=${JOBS:-2}
MAKE=${MAKE:-make}
[ $# -gt 0 ] || set -- src/lib/base/*.h include/txbox.h
for h in "$@"; do [ -f "$h" ] || { echo "rebuild-time: no header '$h'" >&2; exit 2; }; done
log=$(mktemp "${TMPDIR:-/var/tmp}/txbox-rebuild.XXXXXX")
trap 'rm -f "$log"' EXIT

mk() { $MAKE -j"$JOBS" BUILD="$BUILD" ${CC:+CC="$CC"} all >"$log" 2>&1 || { cat "$log" >&2; exit 1; }; }
now() { date +%s.%N; }
mk
# A second run must do nothing: if it did, every figure below would include it.
mk
grep -q "Nothing to be done\|is up to date" "$log" ||
        echo "rebuild-time: make all is not idempotent here (it redid: $(grep -c . "$log") lines)" >&2

row() { # header or "(nothing)"
        local h=$1 deps=- t0 t1 cc made
        if [ "$h" != "(nothing)" ]; then
                deps=$(find "$BUILD" -name '*.d' -exec grep -l -- "[ :]$h\( \|\$\)" {} + 2>/dev/null | wc -l)
                touch "$h"
        fi
        t0=$(now); mk; t1=$(now)
        # compiles carry -c; links and archives name their output with -o or rcs
        cc=$(grep -c -- ' -c ' "$log" || true)
        made=$(grep -v -- ' -c ' "$log" | grep -cE -- '(^| )(-o|rcs) ' || true)
        printf '| %s | %s | %s | %s | %s |\n' "$h" "$deps" "$cc" "$made" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')"
}
echo "| header touched | objects depending on it | compiled | linked or archived | seconds |"
echo "|---|---:|---:|---:|---:|"
row "(nothing)"
for h in "$@"; do row "$h"; done
echo
echo "$(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, make -j$JOBS all in $BUILD, $($MAKE -v | head -1), $(${CC:-cc} --version | head -1); load average$(uptime | sed 's/.*load average//')"
