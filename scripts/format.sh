#!/bin/bash
# scripts/format.sh [--check | --list | FILE...]: the layout of .clang-format, held by a ratchet.
# Every C file of the tree (git ls-files '*.c' '*.h') is either formatted (clang-format
# changes nothing in it) or listed in scripts/format-pending.txt, the files written before
# the layout was enforced, many of them with long lines wrapped by hand.  A new file is
# formatted; a listed file that becomes formatted leaves the list; nothing joins it.
#   --check   (tests/lint/t_format.sh) fails, naming the files, on an unlisted file that is
#             not formatted or a listed one that now is; exits 77 without clang-format 14
#             (another version lays some constructs out differently)
#   --list    prints the files that are not formatted (to start a new list)
#   FILE...   formats these files in place
# The clang-format of Debian 12 (package clang-format, version 14) is the reference.
set -u
cd "$(dirname "$0")/.." || exit 2
PENDING=scripts/format-pending.txt

find_cf() {
        local c
        for c in clang-format-14 clang-format; do
                command -v "$c" >/dev/null || continue
                "$c" --version 2>/dev/null | grep -q 'version 14\.' && { echo "$c"; return 0; }
        done
        return 1
}
CF=$(find_cf) || { echo "format: no clang-format 14 (Debian 12: apt-get install clang-format)" >&2; exit 77; }

# The tree's C files: git's list in a checkout (this directory its top), else every one found
# (a copy or a tarball: never the list of a checkout that merely encloses it).
files() {
        if [ -e .git ]; then git ls-files '*.c' '*.h'
        else find . -name '*.[ch]' -not -path './build*' | sed 's#^\./##' | sort; fi
}
# The files of stdin that are not formatted, one clang-format for all (--dry-run names each
# line it would change: "FILE:LINE:COL: warning: code should be clang-formatted").
unformatted() {
        local -a all
        mapfile -t all
        [ ${#all[@]} -gt 0 ] || return 0
        "$CF" --style=file --dry-run "${all[@]}" 2>&1 |
                sed -n 's/^\(.*\):[0-9]*:[0-9]*: warning: code should be clang-formatted.*/\1/p' | sort -u
}

case "${1:-}" in
--list)
        files | unformatted
        ;;
--check)
        bad=0
        un=$(files | unformatted)
        while read -r f; do
                [ -n "$f" ] || continue
                grep -qxF "$f" "$PENDING" && continue
                echo "format: $f is not laid out as .clang-format says: scripts/format.sh $f" >&2
                bad=1
        done <<<"$un"
        while read -r f; do
                [ -n "$f" ] || continue
                if [ ! -e "$f" ]; then
                        echo "format: $PENDING lists $f, which is gone: take it out" >&2
                        bad=1
                elif ! grep -qxF "$f" <<<"$un"; then
                        echo "format: $f is formatted now: take it out of $PENDING" >&2
                        bad=1
                fi
        done <"$PENDING"
        exit $bad
        ;;
-*)
        echo "usage: scripts/format.sh [--check | --list | FILE...]" >&2
        exit 2
        ;;
*)
        [ $# -gt 0 ] || { echo "usage: scripts/format.sh [--check | --list | FILE...]" >&2; exit 2; }
        exec "$CF" --style=file -i "$@"
        ;;
esac
