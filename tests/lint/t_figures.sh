#!/bin/bash
# scripts/figures.sh --check: the size and symbol rules docs/STYLE.md states hold on this tree
# (median function under 20 lines, none over 100, symbols outside the txbox_ prefix and in
# jansson's json_ namespace no more than their ratchets), printed for the record; and the
# check refuses a function over 100 lines planted in a copy.  TAP.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
nok() { n=$((n + 1)); echo "not ok $n - $1"; }
T=$(mktemp -d "${TMPDIR:-/var/tmp}/txbox-figures.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT

out=$(scripts/figures.sh --check "$BUILD" 2>&1) && ok "docs/STYLE.md's size and symbol rules hold" ||
        nok "figures: $out"
printf '%s\n' "$out" | sed 's/^/# /'
mkdir "$T/src" && cp -r src scripts "$T/src/" && {
        printf 'int long_one(void);\nint long_one(void)\n{\n        int x = 0;\n'
        for i in $(seq 100); do printf '        x += %d;\n' "$i"; done
        printf '        return x;\n}\n'
} >>"$T/src/src/lib/base/mem.c"
out=$(cd "$T/src" && scripts/figures.sh --check "$T/none" 2>&1)
if [ $? -ne 0 ] && grep -q 'mem.c:long_one (105 lines)' <<<"$out"; then ok "refused: a function of 105 lines"
else nok "not refused: a function of 105 lines (got: $out)"; fi
echo "1..$n"
