#!/bin/sh
# Install the Debian packages txbox needs to build and test.  As root: installs what is
# missing.  Otherwise: prints the exact apt-get line and fails when something is missing.
set -eu

# build: compiler, pkg-config and the libraries; tests: bubblewrap and util-linux for the
# outer jail, sqlite3 to inspect the audit log, diffutils for txbox diff.
PKGS="gcc make pkg-config libc6-dev libseccomp-dev libsqlite3-dev libjansson-dev libcap-dev
      bubblewrap util-linux sqlite3 diffutils git"

missing=""
for p in $PKGS; do
        if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
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
