# Integration test library: sourced by tests/integration/t_*.sh.
#
# Outside the jail it makes a throwaway dir T under $TMPDIR (else /var/tmp), copies the txbox binary and the
# test scripts into it, and re-runs the test inside tests/jail.sh (only T writable; as root,
# the mode JAIL_MODE=user runs it as uid 54321).  Inside, it offers TAP helpers.  Every test
# that runs a destructive command runs it through txbox, inside this jail, against paths
# under T.
set -u

if [ -z "${TXBOX_IN_JAIL:-}" ]; then
        BUILD=${BUILD:-build}
        JAIL_MODE=${JAIL_MODE:-user}
        # Not under /tmp or /dev/shm: the sandbox gives the program its own empty ones, which
        # would hide the fixtures the tests leave in T beside the workspace.
        base=${TMPDIR:-/var/tmp}
        case $(realpath -m "$base")/ in
        /tmp/* | /dev/shm/*)
                echo "Bail out! TMPDIR=$base lies under /tmp or /dev/shm, which txbox's sandbox replaces;" \
                        "point TMPDIR elsewhere (default /var/tmp)"
                exit 1 ;;
        esac
        T=$(mktemp -d "$base/txbox-it.XXXXXX") || exit 1
        mkdir -p "$T/bin" "$T/tests" "$T/home" "$T/tmp"
        cp "$BUILD/txbox" "$T/bin/txbox"
        # The test variant (make: $BUILD/testing/txbox) has the failpoints and TXBOX_TEST_*
        # hooks the release build lacks; only the steps that drive them use it ($TXBOX_HOOKS).
        cp "$BUILD/testing/txbox" "$T/bin/txbox-testing"
        cp tests/integration/*.sh "$T/tests/"
        cp tests/mcp/client.mjs "$T/tests/" # this tree's MCP test client (t_mcp.sh)
        mkdir -p "$T/docs" && cp README.md docs/txbox.1 "$T/docs/" # replayed by t_docs.sh
        chmod -R a+rX "$T"
        if [ "$(id -u)" -eq 0 ] && [ "$JAIL_MODE" = user ]; then
                chown -R 54321:54321 "$T"
                # A workspace with an entry whose group the unprivileged sandbox cannot map,
                # as docker or sudo leave behind (t_badinput.sh).
                mkdir -p "$T/unmapped" && echo data >"$T/unmapped/grpfile"
                chown 54321:54321 "$T/unmapped" && chown 54321:0 "$T/unmapped/grpfile" && chmod 664 "$T/unmapped/grpfile"
        fi
        tests/jail.sh "$JAIL_MODE" "$T" env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$T/home" TMPDIR="$T/tmp" \
                TXBOX_IN_JAIL=1 TXBOX_HOST_TMP="${TMPDIR:-/var/tmp}" T="$T" JAIL_MODE="$JAIL_MODE" TXBOX_STRESS="${TXBOX_STRESS:-}" LANG=C.UTF-8 \
                bash "$T/tests/$(basename "$0")"
        rc=$?
        chmod -R u+rwX "$T" 2>/dev/null
        rm -rf "$T"
        exit $rc
fi

TXBOX="$T/bin/txbox"
TXBOX_HOOKS="$T/bin/txbox-testing"
WS="$T/ws"
cd "$T" || exit 1
_n=0 _failed=0

ok() { # ok DESCRIPTION COMMAND...: passes when COMMAND succeeds
        local d=$1
        shift
        _n=$((_n + 1))
        if "$@"; then echo "ok $_n - $d"; else echo "not ok $_n - $d"; _failed=$((_failed + 1)); fi
}
is() { # is GOT EXPECTED DESCRIPTION
        _n=$((_n + 1))
        if [ "$1" = "$2" ]; then echo "ok $_n - $3"; else
                echo "not ok $_n - $3"; echo "#   got:      '$1'"; echo "#   expected: '$2'"; _failed=$((_failed + 1)); fi
}
like() { # like GOT PATTERN DESCRIPTION (grep -E)
        _n=$((_n + 1))
        if printf '%s' "$1" | grep -qE -- "$2"; then echo "ok $_n - $3"; else
                echo "not ok $_n - $3"; echo "#   got: '$(printf '%s' "$1" | head -c 3000)'"; echo "#   want match: '$2'"
                _failed=$((_failed + 1)); fi
}
skip() { _n=$((_n + 1)); echo "ok $_n - $1 # SKIP $2"; }
done_testing() { echo "1..$_n"; [ "$_failed" -eq 0 ]; exit $?; }

# A fresh workspace with a few files; tree_hash prints a digest of names, types, modes,
# link targets and contents, to compare whole trees.
new_ws() {
        # (the overlay's work/work is mode 000: rm cannot enter it unprivileged)
        chmod -R u+rwX "$HOME/.local/state/txbox" 2>/dev/null
        rm -rf "$WS" "$HOME/.local/state/txbox"
        mkdir -p "$WS/src" "$WS/docs"
        printf 'hello\n' >"$WS/README"
        printf 'int main(void) { return 0; }\n' >"$WS/src/main.c"
        printf 'line1\nline2\n' >"$WS/docs/a.txt"
        printf 'b\n' >"$WS/docs/b.txt"
        ln -s README "$WS/link"
}
tree_hash() {
        (cd "$1" && find . -path ./.git -prune -o -printf '%p %y %m %l\n' | LC_ALL=C sort &&
                find . -path ./.git -prune -o -type f -print0 | LC_ALL=C sort -z | xargs -0r sha256sum) | sha256sum | cut -c1-16
}
# tree_hash of the home but for ~/.cache, where txbox keeps the sandbox's private caches
# (made at the first run, written by sandboxed programs; t_home.sh tests what is there).
home_hash() {
        (cd "$HOME" && find . -path ./.cache -prune -o -printf '%p %y %m %l\n' | LC_ALL=C sort &&
                find . -path ./.cache -prune -o -type f -print0 | LC_ALL=C sort -z | xargs -0r sha256sum) | sha256sum | cut -c1-16
}
tx() { "$TXBOX" -C "$WS" "$@"; }
# The id of the newest transaction.
last_tx() { tx log --json -n 1 | sed -n 's/^\[{"tx": *"\([0-9a-f]*\)".*/\1/p'; }
