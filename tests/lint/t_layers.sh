#!/bin/bash
# scripts/layers.sh: today's tree passes, and each rule refuses an edge planted in a copy.
# Reads sources and objects only; writes nothing outside its temp dir.  TAP.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
nok() { n=$((n + 1)); failed=1; echo "not ok $n - $1"; }
T=$(mktemp -d "${TMPDIR:-/var/tmp}/txbox-layers.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT

out=$(scripts/layers.sh 2>&1) && ok "the tree's includes keep to the layers" || nok "tree includes: $out"
if [ -d "$BUILD/src/lib" ]; then
        out=$(scripts/layers.sh --objects "$BUILD" 2>&1) && ok "the objects' symbols keep to the layers" ||
                nok "tree objects: $out"
else
        echo "ok $((n += 1)) - objects # SKIP no $BUILD/src/lib (make all first)"
fi

# A planted change in a copy of the sources must fail the check, naming the edge.
planted() { # description, expected text, then a command run in the copy
        local what=$1 want=$2
        shift 2
        rm -rf "$T/src" && mkdir "$T/src" && cp -r include src scripts "$T/src/" || return 1
        (cd "$T/src" && eval "$*")
        out=$("$T/src/scripts/layers.sh" --root "$T/src" 2>&1)
        if [ $? -ne 0 ] && grep -qF -- "$want" <<<"$out"; then
                ok "refused: $what"
        else
                nok "not refused: $what (got: $out)"
        fi
}
planted "the sandbox including tx.h (upward)" \
        "src/lib/sandbox/sandbox.c (sandbox) includes src/lib/txn/tx.h (txn): upward" \
        "echo '#include \"txn/tx.h\"' >>src/lib/sandbox/sandbox.c"
planted "cleanup.h including policy.h (upward, from a header)" \
        "src/lib/base/cleanup.h (base) includes src/lib/policy/policy.h" \
        "sed -i 's|^#include <errno.h>|&\n#include \"policy/policy.h\"|' src/lib/base/cleanup.h"
planted "the journal including sandbox.h (sideways)" \
        "src/lib/store/journal.c (store) includes src/lib/sandbox/sandbox.h (sandbox): sideways" \
        "echo '#include \"sandbox/sandbox.h\"' >>src/lib/store/journal.c"
planted "a file outside the table" "src/lib/newthing.c has no layer" "touch src/lib/newthing.c"
planted "pol.h included from outside policy/" "src/lib/txn/tx.c includes src/lib/policy/pol.h, private" \
        "echo '#include \"policy/pol.h\"' >>src/lib/txn/tx.c"
planted "a split file's NAME_int.h included from outside its folder" \
        "src/cli/cmd_mcp.c includes src/lib/faces/new_int.h, private" \
        "touch src/lib/faces/new_int.h; echo '#include \"faces/new_int.h\"' >>src/cli/cmd_mcp.c"
# The same edge with an ALLOW entry for it passes (ALLOW is empty today).
rm -rf "$T/src" && mkdir "$T/src" && cp -r include src scripts "$T/src/" &&
        sed -i 's|^ALLOW=.|&\nsrc/lib/txn/tx.c src/lib/policy/pol.h test|' "$T/src/scripts/layers.sh" &&
        echo '#include "policy/pol.h"' >>"$T/src/src/lib/txn/tx.c"
out=$("$T/src/scripts/layers.sh" --root "$T/src" 2>&1) && ok "an edge ALLOW lists passes" ||
        nok "an edge ALLOW lists: $out"
planted "two layers including each other" "layers base and faces use each other" \
        "sed -i 's|^ALLOW=.|&\nsrc/lib/base/mem.h src/lib/faces/mcp.h test|' scripts/layers.sh;
         echo '#include \"faces/mcp.h\"' >>src/lib/base/mem.h"

# A planted reference in an object: a base object calling into a transaction.
if [ -d "$BUILD/src/lib" ] && command -v "${CC:-cc}" >/dev/null; then
        mkdir -p "$T/obj" && cp -r "$BUILD/src" "$T/obj/" && find "$T/obj" -name '*.d' -delete
        printf '#include "txbox.h"\nint planted(void);\nint planted(void) { return txbox_tx_record(0) != 0; }\n' \
                >"$T/planted.c"
        "${CC:-cc}" -Iinclude -c -o "$T/obj/src/lib/base/sha256.o" "$T/planted.c"
        want="src/lib/base/sha256 (base) refers to src/lib/txn/tx (txn): upward"
        out=$(scripts/layers.sh --objects "$T/obj" 2>&1)
        if [ $? -ne 0 ] && grep -qF "$want" <<<"$out"; then
                ok "refused: a base object referring to a txn function"
        else
                nok "not refused: a base object referring to a txn function (got: $out)"
        fi
else
        echo "ok $((n += 1)) - planted object # SKIP no $BUILD/src/lib or no compiler"
fi
echo "1..$n"
exit $failed
