#!/bin/bash
# The policy engine's shell parser (src/lib/policy/sh_parse.c) held against bash's own
# reading of the same text.  Each string is wrapped as the body of a function f and printed
# twice in bash's declare -f form: by bash --pretty-print (bash 5.2 or later: it reads and
# prints, and never runs anything) and by the parser's printer (sh_print.c, through
# tests/corpus/shprint.c).  Both must agree on whether the text is a syntax error and, when
# it is not, print the same program.
#
#   BUILD=build tests/corpus/shparse.sh             the cases in tests/corpus/shparse.txt
#                                                  (one TAP test each; make check)
#   BUILD=build tests/corpus/shparse.sh --corpus    the public corpora (../shared/corpus),
#                                                  an optional suite: agreement per corpus
#
# Only parsing happens: neither bash --pretty-print nor the driver executes a string.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
mode=cases
[ "${1:-}" = --corpus ] && mode=corpus

skip() { echo "1..0 # SKIP $*"; exit 0; }
command -v python3 >/dev/null || skip "python3 needed"
bash --pretty-print /dev/null >/dev/null 2>&1 || skip "this bash has no --pretty-print (bash 5.2+ needed)"
[ -f "$BUILD/libtxbox-int.a" ] || skip "$BUILD/libtxbox-int.a missing; run make first"
CORPUS=""
if [ $mode = corpus ]; then
        top=$(git rev-parse --show-toplevel 2>/dev/null || pwd)
        CORPUS=${TXBOX_CORPUS:-$top/../shared/corpus}
        if [ -z "${TXBOX_CORPUS:-}" ] && [ ! -d "$CORPUS" ]; then
                common=$(git rev-parse --path-format=absolute --git-common-dir 2>/dev/null) &&
                        CORPUS=$(dirname "$(dirname "$common")")/shared/corpus
        fi
        [ -d "$CORPUS/nl2bash" ] || skip "corpus not found at $CORPUS"
        python3 -c 'import yaml, tomllib' 2>/dev/null || skip "python3 with PyYAML and tomllib (3.11+) needed"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/txbox-shparse.XXXXXX")
trap 'rm -rf "$work"' EXIT
san=""
nm "$BUILD/libtxbox-int.a" 2>/dev/null | grep -q __asan_ && san="-fsanitize=address,undefined"
# shellcheck disable=SC2086
cc -O2 $san -Iinclude -Isrc/lib -o "$work/shprint" tests/corpus/shprint.c "$BUILD/libtxbox-int.a" ||
        { echo "Bail out! driver build failed"; exit 1; }

MODE=$mode CORPUS="$CORPUS" WORK="$work" python3 tests/corpus/shparse.py
