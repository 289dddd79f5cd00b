#!/bin/bash
# Every header compiles on its own (make headers: include/txbox.h, src/lib/*/*.h, src/cli/*.h
# and the tests' headers, each as the only line of a file, with the build's flags and
# -Werror): a header includes or declares what it uses, so a file can include only the
# headers it uses itself, and touching a header rebuilds only the files that use it (issue
# 35, docs/STYLE.md).  The check bites: a header planted in a copy that uses bool without
# <stdbool.h>, or a struct it neither includes nor declares, is refused by name.  TAP.
set -u
cd "$(dirname "$0")/../.."
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
nok() { n=$((n + 1)); echo "not ok $n - $1"; }
if ! command -v "${CC:-cc}" >/dev/null || ! command -v make >/dev/null; then
        echo "1..0 # SKIP no compiler or make"
        exit 0
fi
T=$(mktemp -d "${TMPDIR:-/var/tmp}/txbox-headers.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT

out=$(make -s --no-print-directory ${CC:+CC="$CC"} headers 2>&1) && ok "every header compiles on its own" ||
        nok "headers that do not compile on their own: $(grep '^headers:' <<<"$out")"
count=$(make -s --no-print-directory -p -q headers 2>/dev/null | sed -n 's/^HEADERS := //p' | wc -w)
[ "$count" -gt 50 ] && ok "make headers checks $count headers" || nok "make headers checks only $count headers"

mkdir -p "$T/src/tests/unit" "$T/src/tests/fuzz" &&
        cp -r Makefile include "$T/src/" && cp -r src "$T/src/" &&
        cp tests/unit/*.h "$T/src/tests/unit/" && cp tests/fuzz/*.h "$T/src/tests/fuzz/"
plant() { # name, text: the copy's make headers must refuse a header holding text
        printf '#ifndef PLANTED_H\n#define PLANTED_H\n%s\n#endif\n' "$2" >"$T/src/src/lib/base/planted.h"
        out=$(make -s --no-print-directory -C "$T/src" ${CC:+CC="$CC"} headers 2>&1)
        if [ $? -ne 0 ] && grep -q 'headers: src/lib/base/planted.h does not compile on its own' <<<"$out" &&
                [ "$(grep -c '^headers:' <<<"$out")" = 1 ]; then ok "refused: a header with $1"
        else nok "not refused: a header with $1 (got: $out)"; fi
        rm -f "$T/src/src/lib/base/planted.h"
}
plant "bool and no <stdbool.h>" 'bool planted(void);'
plant "an undeclared struct in a prototype" 'int planted(struct txbox_error *err);'
printf '#ifndef PLANTED_H\n#define PLANTED_H\nstruct txbox_error;\nint planted(struct txbox_error *err);\n#endif\n' \
        >"$T/src/src/lib/base/planted.h"
make -s --no-print-directory -C "$T/src" ${CC:+CC="$CC"} headers >/dev/null 2>&1 &&
        ok "accepted: the same header with a forward declaration" || nok "refused a forward-declared struct"
echo "1..$n"
