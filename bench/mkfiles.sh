#!/bin/sh
# bench/mkfiles.sh: the file writers of make bench, one process each, in the current directory.
#   mkfiles.sh tree FILES DIRS   a workspace: DIRS directories d0.. of FILES/DIRS small files
#   mkfiles.sh new N             a change: N new files in new/ (none at all when N is 0), their
#                                contents new in every run of every case (ABRUN_CASE, ABRUN_RUN
#                                from bench/abrun.c), as an agent's edits are: git stores a blob
#                                it already has at almost no cost
set -eu
case "${1:-}" in
tree)
        exec awk -v n="$2" -v dirs="$3" 'BEGIN {
                per = int(n / dirs)
                for (d = 0; d < dirs; d++) {
                        if (system("mkdir d" d) != 0)
                                exit 1
                        for (i = 0; i < per; i++) {
                                p = "d" d "/f" i ".txt"
                                printf "file %d of directory %d\nsome text to make it a line or two\n", i, d > p
                                close(p)
                        }
                }
        }'
        ;;
new)
        [ "$2" -eq 0 ] && exit 0
        mkdir new
        exec awk -v n="$2" -v run="${ABRUN_CASE:-0}.${ABRUN_RUN:-0}" 'BEGIN {
                for (i = 1; i <= n; i++) {
                        p = "new/f" i ".txt"
                        printf "new file %d of %d, run %s\n", i, n, run > p
                        close(p)
                }
        }'
        ;;
*)
        echo "usage: mkfiles.sh tree FILES DIRS | new N" >&2
        exit 2
        ;;
esac
