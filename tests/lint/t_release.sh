#!/bin/bash
# The release binary has no test hooks (issue 35): no failpoint code, no TXBOX_FAILPOINT or
# TXBOX_TEST_* variable it would read, and setting them changes nothing; the test variant
# ($BUILD/testing/txbox), which the suites that drive failpoints use, has them.  Runs only
# `txbox check`, which runs nothing.  TAP.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
nok() { n=$((n + 1)); echo "not ok $n - $1"; }
REL=$BUILD/txbox TST=$BUILD/testing/txbox
if [ ! -x "$REL" ] || [ ! -x "$TST" ]; then
        echo "1..0 # SKIP $REL or $TST not built (make all)"
        exit 0
fi
T=$(mktemp -d "${TMPDIR:-/var/tmp}/txbox-release.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT

syms() { nm "$1" 2>/dev/null | awk '{print $NF}' | grep -c '^failpoint'; }
strs() { grep -acE 'TXBOX_FAILPOINT|TXBOX_TEST_' "$1"; }
[ "$(syms "$REL")" = 0 ] && ok "no failpoint symbol in $REL" || nok "failpoint symbols in $REL: $(syms "$REL")"
[ "$(strs "$REL")" = 0 ] && ok "no TXBOX_FAILPOINT or TXBOX_TEST_* in $REL" || nok "hook variables named in $REL"
# The check bites: the test variant has both.
[ "$(syms "$TST")" -gt 0 ] && ok "the test variant has failpoint" || nok "no failpoint in $TST"
[ "$(strs "$TST")" -gt 0 ] && ok "the test variant reads TXBOX_FAILPOINT" || nok "no hook variables in $TST"
# A failpoint that crashes every judgement: inert in the release build, a refusal in the test one.
mkdir -p "$T/ws" "$T/home"
out=$(cd "$T/ws" && HOME="$T/home" TXBOX_FAILPOINT=judge:0:segv "$OLDPWD/$REL" check -c 'echo hi' 2>&1)
[ "$out" = allow ] && ok "TXBOX_FAILPOINT is inert in the release build" || nok "release build with a failpoint: $out"
out=$(cd "$T/ws" && HOME="$T/home" TXBOX_FAILPOINT=judge:0:segv "$OLDPWD/$TST" check -c 'echo hi' 2>&1)
case $out in *"deny (judgement-failed)"*) ok "the test variant's failpoint refuses" ;; *) nok "test variant: $out" ;; esac
echo "1..$n"
