#!/bin/sh
# scripts/figures.sh [--check] [BUILD]: the size and symbol figures docs/STYLE.md states.
#   functions of src/lib/ (a definition starts at column 0 and ends at the first "}" at
#   column 0): how many, the median and the longest, with their lines;
#   global symbols: what $BUILD/libtxbox.a exports (only txbox_ names: tests/lint/t_symbols.sh),
#   and the internal names its parts share ($BUILD/libtxbox-int.a): all, with the txbox_
#   prefix, in jansson's json_ namespace.
# --check: exit 1 unless the rules docs/STYLE.md gives hold: median under 20 lines, no
# function over 100; the symbols without the txbox_ prefix no more than SYMS_CEILING and
# none in json_ beyond JSON_CEILING (ratchets: lower them when the figures go down).
set -eu
SYMS_CEILING=490
JSON_CEILING=0
check=0
[ "${1:-}" = --check ] && { check=1; shift; }
BUILD=${1:-build}
cd "$(dirname "$0")/.."

fns=$(find src/lib -name '*.c' | sort | xargs awk '
        FNR == 1 { start = 0 }
        /^[A-Za-z_].*\(/ && !/;[ \t]*$/ && !/^(static )?(const )?(struct|enum|union) [a-z_]+ *\{/ { start = FNR; name = $0 }
        /^\}/ && start { n = FNR - start + 1; sub(/\(.*/, "", name); sub(/.*[ *]/, "", name);
                         printf "%d %s:%s\n", n, FILENAME, name; start = 0 }
' | sort -n)
count=$(printf '%s\n' "$fns" | grep -c .)
median=$(printf '%s\n' "$fns" | awk -v c="$count" 'NR == int((c + 1) / 2) { print $1 }')
longest=$(printf '%s\n' "$fns" | tail -n 1)
over80=$(printf '%s\n' "$fns" | awk '$1 > 80' | wc -l)
over100=$(printf '%s\n' "$fns" | awk '$1 > 100 { print $2 " (" $1 " lines)" }')
echo "functions in src/lib: $count, median $median lines, longest ${longest#* } (${longest%% *} lines), $over80 over 80 lines"
[ -z "$over100" ] || printf 'over 100 lines: %s\n' "$over100"

fail=0
if [ -f "$BUILD/libtxbox.a" ]; then
        # (not the sanitizers' own: ASan defines an __odr_asan.NAME beside each global)
        exported=$(nm --defined-only -g "$BUILD/libtxbox.a" 2>/dev/null |
                awk 'NF == 3 && $2 ~ /^[TDBRGS]$/ && $3 !~ /^__(odr_asan|asan|ubsan|sancov)/' | wc -l)
        echo "symbols exported by $BUILD/libtxbox.a: $exported"
fi
if [ -f "$BUILD/libtxbox-int.a" ]; then
        syms=$(nm --defined-only -g "$BUILD/libtxbox-int.a" 2>/dev/null |
                awk 'NF == 3 && $2 ~ /^[TDBRGS]$/ && $3 !~ /^__(odr_asan|asan|ubsan|sancov)/ { print $3 }' | sort -u)
        all=$(printf '%s\n' "$syms" | grep -c .)
        tx=$(printf '%s\n' "$syms" | grep -c '^txbox_' || true)
        js=$(printf '%s\n' "$syms" | grep '^json_' | tr '\n' ' ' || true)
        nj=$(printf '%s\n' "$syms" | grep -c '^json_' || true)
        echo "internal global symbols ($BUILD/libtxbox-int.a): $all, $tx with the txbox_ prefix, $((all - tx)) without (ceiling $SYMS_CEILING), $nj in json_ (ceiling $JSON_CEILING)${js:+: $js}"
        [ $((all - tx)) -le $SYMS_CEILING ] || { echo "figures: $((all - tx)) symbols without the txbox_ prefix, over the ceiling $SYMS_CEILING"; fail=1; }
        [ "$nj" -le $JSON_CEILING ] || { echo "figures: $nj symbols in jansson's json_ namespace, over $JSON_CEILING"; fail=1; }
else
        echo "global symbols: no $BUILD/libtxbox-int.a (make all first)"
fi
if [ $check = 1 ]; then
        [ "$median" -lt 20 ] || { echo "figures: median function $median lines, not under 20"; fail=1; }
        [ -z "$over100" ] || { echo "figures: functions over 100 lines"; fail=1; }
        exit $fail
fi
