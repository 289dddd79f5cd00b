#!/bin/bash
# scripts/checked.sh: today's tree has no unchecked call on a safety path, and the check
# refuses one planted in a copy.  Reads sources only; writes nothing outside its temp dir.
set -u
cd "$(dirname "$0")/../.."
n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
nok() { n=$((n + 1)); echo "not ok $n - $1"; }
T=$(mktemp -d "${TMPDIR:-/var/tmp}/txbox-checked.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT

out=$(scripts/checked.sh 2>&1) && ok "every call on a safety path is checked" || nok "unchecked: $out"

planted() { # description, expected text, then a command run in the copy
        local what=$1 want=$2
        shift 2
        rm -rf "$T/src" && mkdir "$T/src" && cp -r src scripts "$T/src/" || return 1
        (cd "$T/src" && eval "$*")
        out=$("$T/src/scripts/checked.sh" --root "$T/src" 2>&1)
        if [ $? -ne 0 ] && grep -qF -- "$want" <<<"$out"; then
                ok "refused: $what"
        else
                nok "not refused: $what (got: $out)"
        fi
}
planted "a prctl whose result is dropped" "init.c" \
        "sed -i 's|^\\(\\s*\\)if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0) {|\\1prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);\\n\\1if (0) {|' src/lib/sandbox/init.c"
planted "a syncfs as the body of a braceless if" "result of syncfs(fd);" \
        "printf 'void f(int fd);\nvoid f(int fd)\n{\n        if (fd > 2)\n                syncfs(fd);\n}\n' >>src/lib/txn/commit.c"
planted "an if whose body is only a comment" "empty if around if (setns(" \
        "printf 'void g(int fd);\nvoid g(int fd)\n{\n        if (setns(fd, 0) < 0) {\n                /* ignored */\n        }\n}\n' >>src/lib/sandbox/init.c"
planted "a (void) cast does not hide one" "result of (void)unshare(" \
        "printf 'void h(void);\nvoid h(void)\n{\n        (void)unshare(0);\n}\n' >>src/lib/sandbox/init.c"
# A call whose result is tested passes, and so does one marked on purpose.
rm -rf "$T/src" && mkdir "$T/src" && cp -r src scripts "$T/src/" &&
        printf 'void k(int fd);\nvoid k(int fd)\n{\n        if (syncfs(fd) < 0)\n                return;\n        syncfs(fd); /* unchecked: test */\n}\n' >>"$T/src/src/lib/txn/commit.c"
out=$("$T/src/scripts/checked.sh" --root "$T/src" 2>&1) && ok "a checked call and a marked one pass" ||
        nok "a checked call and a marked one: $out"
echo "1..$n"
