#!/bin/sh
# Install the Debian packages txbox needs to build and test.  As root: installs what is
# missing.  Otherwise: prints the exact apt-get line and fails when something is missing.
#   scripts/deps.sh          what building and the demo need (make demo)
#   scripts/deps.sh --test   also what make check uses: clang-format (version 14, Debian 12's)
#                            for the layout check (tests/lint/t_format.sh), and what the
#                            optional tests use
#   scripts/deps.sh --bench  also what make bench uses for its plot and peak-memory table
#   scripts/deps.sh --fuzz   also what make fuzz needs: clang and its libFuzzer and
#                            sanitizer runtimes (libclang-rt-dev: libclang_rt.fuzzer*.a)
#   scripts/deps.sh --pod    also what make check-pod needs: python3-yaml for tests/pod/k8s.py
#                            and jq for the audit-log filter (podman, runc and apparmor for its
#                            container runs are optional: .ci/run installs them)
set -eu

# build: compiler, pkg-config and the libraries (zlib: git's objects, read by the effect rules); tests: bubblewrap and util-linux for the
# outer jail, sqlite3 to inspect the audit log, diffutils for txbox diff.
PKGS="gcc make pkg-config libc6-dev libseccomp-dev libsqlite3-dev libjansson-dev libfyaml-dev zlib1g-dev libcurl4-openssl-dev
      bubblewrap util-linux sqlite3 diffutils git"

# Optional, with --test (make check): the HTML report test renders the page in headless
# Chromium and is skipped without it.  With --bench (make bench): gnuplot-nox draws the plot
# (PNG through cairo, no X), time is /usr/bin/time for the peak memory; each part of the
# report that needs one is left out without it.
OPTIONAL=""
WHY=""
if [ "${1:-}" = --fuzz ]; then
        PKGS="$PKGS clang libclang-rt-dev"
fi
if [ "${1:-}" = --test ]; then
        PKGS="$PKGS clang-format"
fi
if [ "${1:-}" = --pod ]; then
        PKGS="$PKGS python3 python3-yaml jq"
fi
case "${1:-}" in
--test) OPTIONAL="chromium python3" WHY="for the tests that use it: HTML report, agent" ;;
--bench) OPTIONAL="gnuplot-nox time" WHY="for make bench: the plot, the peak memory" ;;
esac

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }

if [ "$(id -u)" -eq 0 ]; then
        for p in $OPTIONAL; do
                installed "$p" && continue
                echo "deps: installing optional $p ($WHY)" >&2
                apt-get update -qq >/dev/null 2>&1 || true
                DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$p" >/dev/null 2>&1 ||
                        echo "deps: could not install $p; what needs it will be skipped" >&2
        done
fi

missing=""
for p in $PKGS; do
        if ! installed "$p"; then
                missing="$missing $p"
        fi
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
        echo "deps: installing:$missing" >&2
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq >/dev/null || apt-get update
        # shellcheck disable=SC2086
        apt-get install -y -qq --no-install-recommends $missing >/dev/null
        exit 0
fi
echo "deps: missing Debian packages:$missing" >&2
echo "deps: install them with: sudo apt-get install -y$missing" >&2
exit 1
