#!/bin/bash
# bench/ab_commit.sh OLD NEW [N]: a large commit by two txbox binaries side by side, for the
# cost of the effect rules on it (issue 29: under 5 % of a 10,000-file commit).  Each binary
# gets its own workspaces and state dirs under $TMPDIR (else /var/tmp); bench/abrun.c
# alternates the cases (old, new, old, new ...) N times (default 6) after a warm-up, with
# the workspace put back before every run (untimed):
#   files  a workspace of 10,000 files; the change writes AB_FILES (10,000) new files;
#   git    the same workspace as a git repository; the change writes them and runs
#          git add -A && git commit (objects, index and a ref: the integrity check walks
#          the new history).
# Every run is traced (TXBOX_TRACE=1).  Printed: abrun's medians of the whole run, and per
# case the medians of the evaluation (trace marks "sandbox done" to "evaluated": the
# changeset and the effect rules), of the whole transaction (to the last mark), and for the
# new binary of the effect rules alone ("changeset built" to "evaluated"); the difference
# of the evaluations, new - old, is what the change costs, put against the old total.
# Then, new binary only, three runs of a change the old one refuses (mass deletion): git rm
# -r of the 10,000 tracked files, committed.  Exits non-zero when a timed run did not commit.
set -eu
A=$(realpath "$1") B=$(realpath "$2") N=${3:-6} FILES=${AB_FILES:-10000}
cd "$(dirname "$0")/.."
MK=$PWD/bench/mkfiles.sh
d=$(mktemp -d "${TMPDIR:-/var/tmp}/txbox-abc.XXXXXX")
trap 'chmod -R u+rwX "$d" 2>/dev/null; rm -rf "$d"' EXIT
cc -O2 -o "$d/abrun" bench/abrun.c
export GIT_AUTHOR_NAME=b GIT_AUTHOR_EMAIL=b@example.com GIT_COMMITTER_NAME=b GIT_COMMITTER_EMAIL=b@example.com
export GIT_CONFIG_NOSYSTEM=1 HOME=$d
mkdir -p "$d/trace"
for s in a b; do
        mkdir -p "$d/$s/files" "$d/$s/git" "$d/$s/fst" "$d/$s/gst"
        (cd "$d/$s/files" && "$MK" tree 10000 100)
        # (no automatic gc: it would run inside a timed run, on one side only)
        (cd "$d/$s/git" && "$MK" tree 10000 100 && git init -q && git config gc.auto 0 && git add -A &&
                git commit -qm base && git tag base)
done
run() { # side binary workspace state case [then] -> the command of one case, traced
        echo "TXBOX_TRACE=1 $2 -C $d/$1/$3 --state $d/$1/$4 run -- sh -c '$MK new $FILES${6:+ && $6}'" \
                "2>$d/trace/$5.\$ABRUN_RUN || echo $5 >>$d/failed"
}
reset_git() { echo "cd $d/$1/git && git reset -q --hard base && rm -rf new"; }
"$d/abrun" -w 1 "$N" \
        --prep="rm -rf $d/a/files/new" "files old=$(run a "$A" files fst files_old)" \
        --prep="rm -rf $d/b/files/new" "files new=$(run b "$B" files fst files_new)" \
        --prep="$(reset_git a)" "git old=$(run a "$A" git gst git_old 'git add -A && git commit -qm n')" \
        --prep="$(reset_git b)" "git new=$(run b "$B" git gst git_new 'git add -A && git commit -qm n')"
if [ -s "$d/failed" ]; then
        echo "ab_commit: runs that did not commit: $(sort "$d/failed" | uniq -c | tr '\n' ' ')" >&2
        exit 1
fi

# "eval total effects" (ms) of one trace: the supervisor's marks only.
marks() {
        awk '$1 == "txbox-trace" && pid == "" { pid = $2 } $1 == "txbox-trace" && $2 == pid {
                t = $3; w = $0; sub(/^txbox-trace +[0-9]+ +[0-9.]+ ms /, "", w)
                if (w == "sandbox done") s = t; if (w == "changeset built") c = t; if (w == "evaluated") e = t
                last = t } END { printf "%.2f %.2f %.2f\n", e - s, last, c ? e - c : -1 }' "$1"
}
median() { sort -g | awk '{ v[NR] = $1 } END { printf "%.2f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
col() { for f in "$d/trace/$1".*; do case $f in *.0) continue ;; esac; marks "$f"; done | awk -v c="$2" '{ print $c }' | median; }
echo
echo "| case | evaluate old | evaluate new | of which effect rules (new) | transaction old | (new - old) / old transaction |"
echo "|---|---:|---:|---:|---:|---:|"
for c in files git; do
        eo=$(col "${c}_old" 1) en=$(col "${c}_new" 1) fx=$(col "${c}_new" 3) to=$(col "${c}_old" 2)
        echo "| $c | $eo ms | $en ms | $fx ms | $to ms | $(awk -v a="$eo" -v b="$en" -v t="$to" 'BEGIN { printf "%+.2f %%", 100 * (b - a) / t }') |"
done

echo
echo "New binary only, git rm -r of the 10,000 tracked files and commit (the old one refuses it):"
(cd "$d/b/git" && git reset -q --hard base && rm -rf new)
for i in 1 2 3; do
        TXBOX_TRACE=1 "$B" -C "$d/b/git" --state "$d/b/gst" run -- sh -c 'git rm -q -r d* && git commit -qm gone' \
                2>"$d/trace/rm.$i" >/dev/null || echo "ab_commit: git rm -r did not commit" >&2
        set -- $(marks "$d/trace/rm.$i")
        echo "run $i: effect rules $3 ms, evaluate $1 ms, transaction $2 ms"
        (cd "$d/b/git" && git reset -q --hard base)
done
