#!/bin/bash
# bench/ab_commit.sh OLD NEW [N]: a large commit by two txbox binaries side by side, for the
# cost of the effect rules on it (issue 29: under 5 % of a 10,000-file commit).  Each binary
# gets its own workspaces and state dirs under $TMPDIR (else /var/tmp); bench/abrun.c
# alternates the cases (old, new, old, new ...) N times (default 10) after a warm-up, with
# the workspace put back before every run (untimed), and prints the medians and new/old:
#   files  a workspace of 10,000 files; the change writes AB_FILES (10,000) new files;
#   git    the same workspace as a git repository; the change writes them and runs
#          git add -A && git commit (objects, index and a ref: the integrity check walks
#          the new history).
# Then, new binary only, TXBOX_TRACE=1: the share of the effect rules (marks "changeset
# built" to "evaluated") in the whole transaction for both, and for a third change the old
# binary refuses (mass deletion): git rm -r of the 10,000 tracked files, committed.
# Runs as whoever calls it; exits non-zero when a run did not commit.
set -eu
A=$(realpath "$1") B=$(realpath "$2") N=${3:-10} FILES=${AB_FILES:-10000}
cd "$(dirname "$0")/.."
MK=$PWD/bench/mkfiles.sh
d=$(mktemp -d "${TMPDIR:-/var/tmp}/txbox-abc.XXXXXX")
trap 'chmod -R u+rwX "$d" 2>/dev/null; rm -rf "$d"' EXIT
cc -O2 -o "$d/abrun" bench/abrun.c
export GIT_AUTHOR_NAME=b GIT_AUTHOR_EMAIL=b@example.com GIT_COMMITTER_NAME=b GIT_COMMITTER_EMAIL=b@example.com
export GIT_CONFIG_NOSYSTEM=1 HOME=$d
for s in a b; do
        mkdir -p "$d/$s/files" "$d/$s/git" "$d/$s/fst" "$d/$s/gst"
        (cd "$d/$s/files" && "$MK" tree 10000 100)
        # (no automatic gc: it would run inside a timed run, on one side only)
        (cd "$d/$s/git" && "$MK" tree 10000 100 && git init -q && git config gc.auto 0 && git add -A &&
                git commit -qm base && git tag base)
done
# every run must commit: a refused one would time something else
chk='|| echo "$ABRUN_CASE" >>'"$d/failed"
run() { # side binary workspace state -> the command of one case
        echo "$2 -C $d/$1/$3 --state $d/$1/$4 run -- sh -c '$MK new $FILES${5:+ && $5}' $chk"
}
reset_git() { echo "cd $d/$1/git && git reset -q --hard base && rm -rf new"; }
"$d/abrun" -w 1 "$N" \
        --prep="rm -rf $d/a/files/new" "files old=$(run a "$A" files fst)" \
        --prep="rm -rf $d/b/files/new" "files new=$(run b "$B" files fst)" \
        --prep="$(reset_git a)" "git old=$(run a "$A" git gst 'git add -A && git commit -qm n')" \
        --prep="$(reset_git b)" "git new=$(run b "$B" git gst 'git add -A && git commit -qm n')"
if [ -s "$d/failed" ]; then
        echo "ab_commit: runs that did not commit, by case: $(sort "$d/failed" | uniq -c | tr '\n' ' ')" >&2
        exit 1
fi

# The effect rules' share of the new binary's transaction, from its trace marks.
share() { # label, then the txbox arguments
        local label=$1 t
        shift
        t=$(TXBOX_TRACE=1 "$B" "$@" 2>&1 >/dev/null | awk '$1 == "txbox-trace" && pid == "" { pid = $2 }
                $1 == "txbox-trace" && $2 == pid { last = $3 } / ms changeset built$/ && $2 == pid { c = $3 }
                / ms evaluated$/ && $2 == pid { e = $3 } END { printf "%.1f %.1f %.1f", e - c, last, 100 * (e - c) / last }')
        set -- $t
        printf '%s: effect rules %s ms of %s ms (%s %%)\n' "$label" "$1" "$2" "$3"
}
rm -rf "$d/b/files/new"
(cd "$d/b/git" && git reset -q --hard base && rm -rf new)
for i in 1 2 3; do
        share "files, run $i" -C "$d/b/files" --state "$d/b/fst" run -- sh -c "$MK new $FILES"
        rm -rf "$d/b/files/new"
        share "git, run $i" -C "$d/b/git" --state "$d/b/gst" run -- sh -c "$MK new $FILES && git add -A && git commit -qm n"
        (cd "$d/b/git" && git reset -q --hard base && rm -rf new)
        share "git rm -r of 10,000 tracked files, run $i" -C "$d/b/git" --state "$d/b/gst" run -- \
                sh -c 'git rm -q -r d* && git commit -qm gone'
        (cd "$d/b/git" && git reset -q --hard base)
done
