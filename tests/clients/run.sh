#!/bin/bash
# make check-clients: the real agents against txbox, end to end (docs/INTEGRATIONS.md).
#
# Installs the clients from the npm registry at the versions pinned below, into a cache
# (TXBOX_CLIENTS_CACHE, default $TMPDIR/txbox-clients-cache; reused when present), then runs
# tests/clients/t_clients.sh inside the test jail (tests/jail.sh user: read-only system, only
# a throwaway dir writable, uid 54321 when run as root, no network but its own loopback).
# Each client talks to a scripted model server on 127.0.0.1 (model_server.mjs): no sign-in,
# no network.  Without node, npm or the registry, it prints one SKIP line and exits 0.
# TXBOX_CLIENTS_ONLY="claude codex gemini inspector sdk" picks sections; TXBOX_CLIENTS_KEEP=1
# keeps the run's directory (requests, outputs) for a look.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
CACHE=${TXBOX_CLIENTS_CACHE:-${TMPDIR:-/tmp}/txbox-clients-cache}
# The versions docs/INTEGRATIONS.md names.
PKGS="claude:@anthropic-ai/claude-code@2.1.332 codex:@openai/codex@0.171.0 gemini:@google/gemini-cli@0.61.0
inspector:@modelcontextprotocol/inspector@2.12.0 sdk:@modelcontextprotocol/sdk@1.32.2"

skip_all() { echo "ok 1 - the real clients # SKIP $*"; echo "1..1"; echo "clients: 0 passed, 0 failed, 1 skipped"; exit 0; }

command -v node >/dev/null && command -v npm >/dev/null || skip_all "node and npm are not installed (Debian: apt-get install nodejs npm)"
command -v bwrap >/dev/null || skip_all "bubblewrap is not installed (the test jail needs it)"
[ -x "$BUILD/testing/txbox" ] || { echo "clients: $BUILD/testing/txbox is missing: run make first" >&2; exit 1; }

mkdir -p "$CACHE" && chmod 755 "$CACHE" || { echo "clients: cannot create the cache $CACHE" >&2; exit 1; }
install_one() { # NAME SPEC: into $CACHE/NAME-VERSION unless there; a log on failure
        local name=$1 spec=$2 dir tmp
        dir="$CACHE/$name-${spec##*@}"
        [ -f "$dir/.complete" ] && return 0
        tmp=$(mktemp -d "$CACHE/.$name.XXXXXX") || return 1
        if timeout 600 npm install --prefix "$tmp" --save-exact --no-audit --no-fund --loglevel=error --fetch-retries=2 \
                --fetch-timeout=60000 "$spec" >"$tmp/npm.log" 2>&1; then
                touch "$tmp/.complete"
                rm -rf "$dir" && mv "$tmp" "$dir"
        else
                cp "$tmp/npm.log" "$CACHE/$name.npm.log" 2>/dev/null
                rm -rf "$tmp"
                return 1
        fi
}
chosen() { # NAME: a section of TXBOX_CLIENTS_ONLY (all when unset)
        local w
        [ -z "${TXBOX_CLIENTS_ONLY:-}" ] && return 0
        for w in $TXBOX_CLIENTS_ONLY; do [[ $w == "$1" || $w == "$1"-* ]] && return 0; done
        return 1
}
missing="" have=0
for p in $PKGS; do
        chosen "${p%%:*}" || continue
        if [ -f "$CACHE/${p%%:*}-${p##*@}/.complete" ]; then have=$((have + 1)); else missing="$missing $p"; fi
done
# make check runs only what is cached (TXBOX_CLIENTS_INSTALL=0; what is missing is skipped
# by name): installing is make check-clients' job, and .ci/run's
if [ -n "$missing" ] && [ "${TXBOX_CLIENTS_INSTALL:-1}" = 0 ]; then
        [ "$have" = 0 ] && skip_all "not installed in $CACHE:$missing (make check-clients installs them)"
        missing=""
fi
if [ -n "$missing" ]; then
        if ! timeout 60 npm view "@modelcontextprotocol/sdk@1.32.2" version >/dev/null 2>&1; then
                skip_all "the npm registry cannot be reached (npm view failed); the clients are not cached in $CACHE"
        fi
        echo "clients: installing$missing into $CACHE"
        pids=""
        for p in $missing; do install_one "${p%%:*}" "${p#*:}" & pids="$pids $!"; done
        failed=0
        for pid in $pids; do wait "$pid" || failed=1; done
        if [ "$failed" = 1 ]; then
                echo "clients: npm install failed:" >&2
                tail -n 5 "$CACHE"/*.npm.log >&2 2>/dev/null
                exit 1
        fi
fi
chmod -R a+rX "$CACHE"

T=$(mktemp -d "${TMPDIR:-/tmp}/txbox-clients.XXXXXX") || exit 1
mkdir -p "$T/bin" "$T/tests" "$T/home" "$T/tmp"
# The test variant ($BUILD/testing/txbox, with failpoints): the suite checks that a judge that
# crashes (TXBOX_FAILPOINT=judge:0:segv) blocks the clients' commands.
cp "$BUILD/testing/txbox" "$T/bin/txbox"
ln -s txbox "$T/bin/txbox-prefix"
for p in $PKGS; do
        n=${p%%:*}
        ln -s "$CACHE/$n-${p##*@}" "$T/$n"
done
# the SDK test client beside a link to the cached packages (ES modules resolve packages
# from the script's own directory); the cache itself is never written to here
rm "$T/sdk" && mkdir "$T/sdk" && ln -s "$CACHE/sdk-1.32.2/node_modules" "$T/sdk/node_modules"
cp tests/mcp/client.mjs "$T/sdk/client.mjs"
cp tests/clients/*.sh tests/clients/*.mjs "$T/tests/"
chmod -R a+rX "$T"
[ "$(id -u)" -eq 0 ] && chown -R 54321:54321 "$T"
JAIL_RO="$CACHE" tests/jail.sh user "$T" env -i PATH="$T/bin:/usr/local/bin:/usr/bin:/bin" HOME="$T/home" \
        TMPDIR="$T/tmp" T="$T" LANG=C.UTF-8 TXBOX_IN_JAIL=1 ONLY="${TXBOX_CLIENTS_ONLY:-}" bash "$T/tests/t_clients.sh" | tee "$T.tap"
rc=${PIPESTATUS[0]}
pass=$(grep -c '^ok ' "$T.tap") fail=$(grep -c '^not ok ' "$T.tap") skip=$(grep -c '^ok .*# SKIP' "$T.tap")
grep -qE '^1\.\.[0-9]+' "$T.tap" || { echo "clients: no TAP plan"; fail=$((fail + 1)); }
[ "$rc" -ne 0 ] && [ "$fail" -eq 0 ] && fail=1
if [ -n "${TXBOX_CLIENTS_KEEP:-}" ]; then
        echo "clients: kept $T (the sessions' requests, outputs and homes)"
else
        chmod -R u+rwX "$T" 2>/dev/null
        rm -rf "$T" "$T.tap"
fi
echo "clients: $((pass - skip)) passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
