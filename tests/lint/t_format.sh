#!/bin/bash
# scripts/format.sh --check: every C file is laid out as .clang-format says, or is one of the
# files listed in scripts/format-pending.txt (written before the layout was enforced); and,
# in a small tree of its own, the check refuses a new file that is not formatted, a listed
# file that has become formatted (the list only shrinks) and a listed file that is gone.
# Skipped without clang-format 14.  TAP.
set -u
cd "$(dirname "$0")/../.." || exit 1
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
nok() { n=$((n + 1)); echo "not ok $n - $1"; }
# refused WHAT PATTERN: the check of the small tree fails and says PATTERN.
refused() {
        local out
        if out=$(cd "$T" && scripts/format.sh --check 2>&1); then
                nok "not refused: $1"
        elif grep -qF "$2" <<<"$out"; then
                ok "refused: $1"
        else
                nok "refused, but not for $1: $out"
        fi
}
if out=$(scripts/format.sh --check 2>&1); then
        ok "every C file is formatted or listed in scripts/format-pending.txt"
elif [ $? = 77 ]; then
        echo "1..0 # SKIP $out"
        exit 0
else
        nok "format: $out"
fi
T=$(mktemp -d "${TMPDIR:-/var/tmp}/txbox-format.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
mkdir "$T/scripts" && cp .clang-format "$T/" && cp scripts/format.sh "$T/scripts/" || exit 1
printf 'int old(int x)\n{\n        return x+1;\n}\n' >"$T/old.c"
printf 'int kept(int x) { return x + 1; }\n' >"$T/kept.c"
echo old.c >"$T/scripts/format-pending.txt"
if (cd "$T" && scripts/format.sh --check); then ok "a formatted file and a listed one pass"
else nok "a formatted file and a listed one do not pass"; fi
printf 'int  planted(int x) { return x+1; }\n' >"$T/planted.c"
refused "a new file that is not formatted" "planted.c is not laid out"
rm "$T/planted.c"
(cd "$T" && scripts/format.sh old.c)
refused "a listed file that is formatted now, still on the list" "old.c is formatted now"
rm "$T/old.c"
refused "a listed file that is gone" "lists old.c, which is gone"
echo "1..$n"
