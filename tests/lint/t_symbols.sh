#!/bin/bash
# The library exports only its API (issue 35): every global symbol $BUILD/libtxbox.a defines
# begins with txbox_, and a program that embeds it may define the names txbox uses inside
# (xmalloc, jv_text, policy_free, ...) without a clash.  The internal archive
# ($BUILD/libtxbox-int.a, what the CLI is built from) still has them: the same program
# linked against it fails, which shows the check bites.  TAP.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
nok() { n=$((n + 1)); echo "not ok $n - $1"; }
LIB=$BUILD/libtxbox.a INT=$BUILD/libtxbox-int.a
if [ ! -f "$LIB" ] || [ ! -f "$INT" ]; then
        echo "1..0 # SKIP $LIB or $INT not built (make all)"
        exit 0
fi
T=$(mktemp -d "${TMPDIR:-/var/tmp}/txbox-symbols.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT

# (AddressSanitizer's __odr_asan.* indicators of a SANITIZE=1 build are the sanitizer's, not ours)
defined() { nm -g --defined-only "$1" 2>/dev/null | awk 'NF == 3 && $3 !~ /^__odr_asan/ { print $3 }' | sort -u; }
api=$(defined "$LIB" | grep -c '^txbox_')
other=$(defined "$LIB" | grep -v '^txbox_')
[ "$api" -gt 20 ] && ok "$LIB exports $api txbox_ names" || nok "$LIB exports $api txbox_ names"
[ -z "$other" ] && ok "and nothing else" || nok "$LIB exports names without txbox_: $(echo $other | cut -c1-300)"
inner=$(defined "$INT" | grep -vc '^txbox_')
[ "$inner" -gt 100 ] && ok "the internal archive has $inner other names (the check above bites)" ||
        nok "the internal archive has only $inner names without txbox_"

# An embedder with its own helpers of txbox's internal names.
cat > "$T/embed.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "txbox.h"
void *xmalloc(size_t n);
void *xmalloc(size_t n) { return malloc(n + 1); }
const char *jv_text(void);
const char *jv_text(void) { return "mine"; }
void policy_free(void *p);
void policy_free(void *p) { free(p); }
int main(int argc, char **argv)
{
        struct txbox_ws *ws = NULL;
        struct txbox_error err = {0};
        if (argc < 2 || txbox_ws_open(argv[1], NULL, 0, &ws, &err) < 0) {
                fprintf(stderr, "open: %s\n", err.msg);
                return 1;
        }
        txbox_ws_close(ws);
        free(xmalloc(1));
        printf("%s %s\n", txbox_outcome_name(TXBOX_COMMITTED), jv_text());
        return 0;
}
C
san=""
nm "$LIB" 2>/dev/null | grep -q __asan_ && san="-fsanitize=address,undefined"
libs=$(pkg-config --libs libseccomp sqlite3 jansson libfyaml zlib libcurl)
mkdir -p "$T/ws" "$T/home"
# shellcheck disable=SC2086
if ${CC:-cc} $san -Iinclude -o "$T/embed" "$T/embed.c" "$LIB" $libs -lpthread 2>"$T/err"; then
        ok "a program with its own xmalloc, jv_text and policy_free links against $LIB"
        out=$(HOME="$T/home" XDG_STATE_HOME="$T/home/state" "$T/embed" "$T/ws" 2>&1)
        [ "$out" = "committed mine" ] && ok "and runs the library (a workspace opened and closed)" ||
                nok "the embedder printed: $out"
else
        nok "the embedder does not link against $LIB: $(head -c 400 "$T/err")"
fi
# shellcheck disable=SC2086
if ${CC:-cc} $san -Iinclude -o "$T/embed2" "$T/embed.c" "$INT" $libs -lpthread 2>"$T/err2"; then
        nok "the same program links against the internal archive too: the test proves nothing"
else
        grep -q "multiple definition" "$T/err2" && ok "against the internal archive it clashes (multiple definition)" ||
                nok "against the internal archive it fails otherwise: $(head -c 300 "$T/err2")"
fi
echo "1..$n"
