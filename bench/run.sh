#!/bin/bash
# make bench: side-by-side timings (alternating runs, medians, ratios to a baseline measured
# in the same run; never a timed assertion).  Writes a markdown report to stdout and a PNG
# plot; docs/BENCHMARKS.md records the figures with this command.
#   BENCH_N=20        runs of each light case (one transaction of a small change)
#   BENCH_N_HEAVY=5   runs of each case that writes 1,000 files or more
#   BENCH_N_BUILD=4   runs of each side of the build of txbox itself (about 10 s each)
#   BENCH_QUICK=1     smoke run: few runs, trees and changes ten times smaller
#   BENCH_SECTIONS="exec mcp"  only these sections (of: exec disk wssize change memory build mcp agent)
#   BENCH_CALLS=20    commands per session of the mcp and agent sections
#   BENCH_UID=54321   the unprivileged user of the exec section's second half (when run as root)
#   BENCH_PLOT_OUT=F  write the plot to F (e.g. docs/benchmarks.png) instead of the kept
#                     results directory $TMPDIR/txbox-bench-out.XXXXXX
# Everything runs in throwaway directories under $TMPDIR (else /var/tmp), removed at exit (but the results
# directory, which holds the plot and the raw medians).
set -eu
PLOT_OUT=${BENCH_PLOT_OUT:-}
[ -n "$PLOT_OUT" ] && [ "${PLOT_OUT#/}" = "$PLOT_OUT" ] && PLOT_OUT="$PWD/$PLOT_OUT"
cd "$(dirname "$0")/.."
ROOT=$(pwd)
BUILD=${BUILD:-build}
if [ "${BENCH_QUICK:-0}" = 1 ]; then
        N=${BENCH_N:-3} NH=${BENCH_N_HEAVY:-2} NB=${BENCH_N_BUILD:-1} WB=0
        TREES="100:10 1000:10 10000:100" CHANGES="0 1 100 1000" BASE=1000:10
else
        N=${BENCH_N:-20} NH=${BENCH_N_HEAVY:-5} NB=${BENCH_N_BUILD:-4} WB=1
        TREES="100:10 10000:100 100000:100" CHANGES="0 1 1000 10000" BASE=10000:100
fi
BIG=${CHANGES##* }
TX="$ROOT/$BUILD/txbox"
MK="$ROOT/bench/mkfiles.sh"
[ -x "$TX" ] || { echo "bench: build $TX first (make)" >&2; exit 1; }

T=$(mktemp -d "${TMPDIR:-/var/tmp}/txbox-bench.XXXXXX")
trap 'umount "$T/mem" 2>/dev/null || true; chmod -R u+rwX "$T"; rm -rf "$T"' EXIT
OUT=$(mktemp -d "${TMPDIR:-/var/tmp}/txbox-bench-out.XXXXXX")
cc -O2 -o "$T/abrun" bench/abrun.c
cc -O2 -shared -fPIC -o "$T/peakrss.so" bench/peakrss.c
ABRUN="$T/abrun"
IDSED='s/.*"tx": *"\([0-9a-f]*\)".*/\1/p' # the id in a --report file
mkdir -p "$T/home" "$T/trace"
export HOME="$T/home" GIT_CONFIG_NOSYSTEM=1

commas() { sed ':a;s/\B[0-9]\{3\}\>/,&/;ta'; }
# Median of the numbers on stdin (printf format $1, default %.2f), or "-" when there are none.
median() { sort -g | awk -v fmt="${1:-%.2f}\n" '{ v[NR] = $1 } END {
        if (NR == 0) print "-"; else printf fmt, NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# Field F (2: median, 3: min) of case NAME in an abrun TSV.
field() { awk -F'\t' -v n="$2" -v f="$3" '$1 == n { print $f }' "$1"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b == 0) print "-"; else printf "%.2f\n", a / b }'; }
# A workspace with a state directory of its own: DIR FILES:DIRS
mktree() {
        mkdir -p "$1/ws" "$1/state"
        (cd "$1/ws" && "$MK" tree "${2%:*}" "${2#*:}")
}
# Per-run traces of txbox (TXBOX_TRACE=1, run >= 1) -> "mark<TAB>median ms" of the time
# from the supervisor's previous mark to this one, in the order of the marks.
trace_phases() {
        local f
        for f in "$@"; do
                case $f in *.0) continue ;; esac
                awk '$1 == "txbox-trace" && pid == "" { pid = $2 } $1 == "txbox-trace" && $2 == pid {
                        w = $0; sub(/^txbox-trace +[0-9]+ +[0-9.]+ ms /, "", w)
                        if (!(w in ord)) ord[w] = ++n
                        d[w] += $3 - prev; prev = $3 }
                     END { for (w in d) printf "%d\t%s\t%.3f\n", ord[w], w, d[w] }' "$f"
        done | sort -t"$(printf '\t')" -k2,2 -k3,3g | awk -F'\t' '
                function flush() { if (c) printf "%d\t%s\t%.2f\n", o, name, c % 2 ? v[(c + 1) / 2] : (v[c / 2] + v[c / 2 + 1]) / 2 }
                $2 != name { flush(); name = $2; c = 0; o = $1 } { v[++c] = $3; if ($1 < o) o = $1 } END { flush() }' |
                sort -t"$(printf '\t')" -k1,1n -s | cut -f2-
}
# Median ms between the marks "evaluated" and "decided" (the commit) over the runs.
commit_ms() {
        local f
        for f in "$@"; do
                case $f in *.0) continue ;; esac
                awk '$1 == "txbox-trace" && pid == "" { pid = $2 } $2 == pid && / ms evaluated$/ { e = $3 }
                     $2 == pid && / ms decided$/ && e != "" { print $3 - e }' "$f"
        done | median
}

echo "# make bench"
echo
echo "$(date -u '+%F %H:%M') UTC, $(nproc) CPUs, $(uname -r), uid $(id -u), txbox $("$TX" --version | cut -d' ' -f2),"
echo "load average $(cut -d' ' -f1-3 /proc/loadavg) at start; BENCH_N=$N, BENCH_N_HEAVY=$NH, BENCH_N_BUILD=$NB."
echo "Every table compares cases run alternately (A B C A B C ...) in this run, after a warm-up run"
echo "of each; medians in milliseconds. Trees and changes are files of one or two lines."
if [ "${BENCH_QUICK:-0}" = 1 ]; then
        echo "BENCH_QUICK=1: a smoke run, with trees and changes ten times smaller; not figures to quote."
fi

# 1. One transaction against bare exec and bubblewrap (100-file workspace), as root and as an
# unprivileged user: wall-clock median and p95, and the CPU time of the whole process tree
# (task-clock: txbox, its sandbox's init and program, every process they start), bubblewrap
# with the same isolation in the same rotation.  As root, the user's half runs as uid
# BENCH_UID (default 54321) under setpriv, in a directory of its own; otherwise only the
# caller's half runs.
BENCH_UID=${BENCH_UID:-54321}
section_exec() {
        echo
        echo "## txbox run vs bare exec and bubblewrap ($N runs each; workspace of 100 files)"
        echo
        echo "Each table is one rotation (A B C ... A B C ...); *CPU*: median task-clock of the whole"
        echo "process tree of a run (what \`perf stat -e task-clock\` counts: txbox, its sandbox's init"
        echo "and program; bubblewrap and its children). Bubblewrap runs the same command with the same"
        echo "isolation: \`bwrap --ro-bind / / --bind WS WS --dev /dev --proc /proc --tmpfs /tmp --unshare-all"
        echo "--die-with-parent\`. Targets of issue 32: txbox / bwrap at most 1.0 (wall median), 1.2 (p95),"
        echo "1.2 (CPU)."
        exec_table "$(id -u)" "$T/exec" ""
        if [ "$(id -u)" = 0 ]; then
                mkdir -p "$T/user"
                chmod 711 "$T"
                cp "$TX" "$ABRUN" "$T/user/" && chown -R "$BENCH_UID:$BENCH_UID" "$T/user"
                exec_table "$BENCH_UID" "$T/user/exec" \
                        "setpriv --reuid=$BENCH_UID --regid=$BENCH_UID --clear-groups --inh-caps=-all --bounding-set=-all -- env HOME=$T/user TMPDIR=$T/user"
        fi
}

# exec_table UID DIR RUNAS: one rotation as UID (RUNAS: the command prefix that becomes it).
exec_table() {
        local uid=$1 d=$2 runas=$3 tx=$TX abrun=$ABRUN
        if [ -n "$runas" ]; then
                tx=$T/user/txbox abrun=$T/user/abrun
                $runas sh -c "mkdir -p $d/ws $d/state && cd $d/ws && $MK tree 100 10" || return 0
        else
                mktree "$d" 100:10
        fi
        local one="sh -c 'echo x >>d0/f0.txt'" f="$T/exec.$uid.tsv"
        [ -n "$runas" ] && f="$T/user/exec.$uid.tsv"
        local bw="bwrap --ro-bind / / --bind $d/ws $d/ws --dev /dev --proc /proc --tmpfs /tmp --unshare-all --die-with-parent"
        local args=("sh -c true=cd $d/ws && sh -c true")
        if command -v bwrap >/dev/null; then
                args+=("bwrap, true=cd $d/ws && $bw true")
                args+=("bwrap, the one-file change=cd $d/ws && $bw $one")
        fi
        args+=("txbox run -- true=cd $d/ws && $tx --state $d/state run -- true")
        args+=("txbox run, one-file change committed=cd $d/ws && $tx --state $d/state run -- $one")
        local loop="i=0; while [ \$i -lt 100 ]; do /bin/true; i=\$((i + 1)); done"
        if [ -z "$runas" ]; then
                args+=("sh -c: 100 execs of /bin/true=cd $d/ws && sh -c '$loop'")
                args+=("txbox run: 100 execs of /bin/true=cd $d/ws && $tx --state $d/state run -- sh -c '$loop'")
        fi
        echo
        echo "### As uid $uid$([ "$uid" = 0 ] && echo " (root: the transaction gets a cgroup of its own where the machine has one)")"
        echo
        # shellcheck disable=SC2086 # runas is a command prefix
        $runas "$abrun" -c -t "$f" "$N" "${args[@]}" || { echo "(failed)"; return 0; }
        if command -v bwrap >/dev/null; then
                echo
                echo "txbox / bwrap, as uid $uid:"
                local c
                for c in "one-file change:txbox run, one-file change committed:bwrap, the one-file change" \
                        "true:txbox run -- true:bwrap, true"; do
                        local what=${c%%:*} rest=${c#*:}
                        local x=${rest%%:*} b=${rest#*:}
                        echo "- $what: wall median **$(ratio "$(field "$f" "$x" 2)" "$(field "$f" "$b" 2)")**," \
                                "p95 **$(ratio "$(field "$f" "$x" 6)" "$(field "$f" "$b" 6)")**," \
                                "CPU **$(ratio "$(field "$f" "$x" 7)" "$(field "$f" "$b" 7)")**"
                done
        fi
        if [ -z "$runas" ]; then
                echo
                echo "Cost of one execve in the sandbox beyond a plain one (the supervisor checks each):"
                echo "**$(per_exec 2 "$f") ms** from the medians, $(per_exec 3 "$f") ms from the minimums ((txbox loop - txbox run -- true"
                echo "- (sh loop - sh -c true)) / 100; a difference of differences, so noisy on a busy machine)."
        fi
}
# ms per exec from column F of the exec table (2: medians, 3: minimums).
per_exec() {
        local f=$2
        awk -v tl="$(field "$f" "txbox run: 100 execs of /bin/true" "$1")" -v pl="$(field "$f" "sh -c: 100 execs of /bin/true" "$1")" \
                -v tt="$(field "$f" "txbox run -- true" "$1")" -v pt="$(field "$f" "sh -c true" "$1")" \
                'BEGIN { printf "%.2f", ((tl - tt) - (pl - pt)) / 100 }'
}

# 1b. What the disk costs: the one-file change on this file system and on a tmpfs (no device
# to sync, no discard), with bubblewrap on each, in one rotation.  Mounting the tmpfs needs
# root; otherwise the section says so and is skipped.
section_disk() {
        echo
        echo "## The one-file change on this disk and on a tmpfs ($N runs each; workspace of 100 files)"
        echo
        if [ "$(id -u)" != 0 ] || ! command -v bwrap >/dev/null; then
                echo "Skipped: it needs root (to mount a tmpfs) and bwrap."
                return 0
        fi
        mkdir -p "$T/mem"
        if ! mount -t tmpfs -o size=512m,mode=0700 tmpfs "$T/mem"; then
                echo "Skipped: cannot mount a tmpfs here."
                return 0
        fi
        mktree "$T/disk" 100:10
        mktree "$T/mem" 100:10
        local one="sh -c 'echo x >>d0/f0.txt'" args=() d
        for d in disk mem; do
                local bw="bwrap --ro-bind / / --bind $T/$d/ws $T/$d/ws --dev /dev --proc /proc --tmpfs /tmp --unshare-all --die-with-parent"
                args+=("bwrap, $d=cd $T/$d/ws && $bw $one")
                args+=("txbox run, $d=cd $T/$d/ws && $TX --state $T/$d/state run -- $one")
        done
        "$ABRUN" -c -t "$T/disk.tsv" "$N" "${args[@]}" | sed 's/, disk |/, this disk |/; s/, mem |/, tmpfs |/'
        local f="$T/disk.tsv"
        echo
        echo "txbox / bwrap: **$(ratio "$(field "$f" "txbox run, disk" 2)" "$(field "$f" "bwrap, disk" 2)")** on this disk,"
        echo "**$(ratio "$(field "$f" "txbox run, mem" 2)" "$(field "$f" "bwrap, mem" 2)")** on the tmpfs (medians); CPU **$(ratio "$(field "$f" "txbox run, disk" 7)" "$(field "$f" "bwrap, disk" 7)")** and"
        echo "**$(ratio "$(field "$f" "txbox run, mem" 7)" "$(field "$f" "bwrap, mem" 7)")**. The same transaction with its one sync and"
        echo "its layers' directories on a file system that charges nothing for them: the difference"
        echo "between the two ratios is what this disk charges a crash-safe commit."
        umount "$T/mem" || umount -l "$T/mem"
}

# 2. Workspace size: the same one-file change in trees of growing size.
section_wssize() {
        local t files args=() small="" big=""
        for t in $TREES; do
                files=${t%:*}
                mktree "$T/ws$files" "$t"
                args+=("$files=cd $T/ws$files/ws && TXBOX_TRACE=1 $TX --state $T/ws$files/state run -- sh -c 'echo x >>d0/f0.txt' 2>$T/trace/ws$files.\$ABRUN_RUN")
                small=${small:-$files} big=$files
        done
        "$ABRUN" -q -t "$T/wssize.tsv" "$N" "${args[@]}"
        echo
        echo "## Workspace size: one-file change committed ($N runs each)"
        echo
        echo "Trees of 10 to 100 directories of small files (in the page cache, as an active workspace's are)."
        echo "Commit: TXBOX_TRACE=1, from the mark \"evaluated\" to \"decided\"."
        echo
        echo "| workspace files | median ms | min ms | ratio to $small files | commit ms |"
        echo "|---:|---:|---:|---:|---:|"
        local base med
        base=$(field "$T/wssize.tsv" "$small" 2)
        : >"$OUT/wssize.dat"
        for t in $TREES; do
                files=${t%:*}
                med=$(field "$T/wssize.tsv" "$files" 2)
                echo "| $(echo "$files" | commas) | $med | $(field "$T/wssize.tsv" "$files" 3) | $(ratio "$med" "$base") | $(commit_ms "$T/trace/ws$files".*) |"
                echo "$files $med $(commit_ms "$T/trace/ws$files".*)" >>"$OUT/wssize.dat"
        done
        echo
        echo "Ratio $(echo "$big" | commas) / $(echo "$small" | commas) files: **$(ratio "$(field "$T/wssize.tsv" "$big" 2)" "$base")** (target of issue 7: at most 1.15)."
        phase_table ws "$(for t in $TREES; do echo "${t%:*}"; done)" files
}

# Median time of each phase of the supervisor (from its previous mark): phase_table PREFIX
# SIZES WHAT, one column "SIZE WHAT" per size, from the traces $T/trace/PREFIX$SIZE.RUN.
phase_table() {
        local prefix=$1 files cols="" head="" rule=""
        for files in $2; do
                trace_phases "$T/trace/$prefix$files".* >"$T/phases.$files"
                [ -s "$T/phases.$files" ] || { echo; echo "(no TXBOX_TRACE output: no phase table)"; return 0; }
                cols="$cols $T/phases.$files" head="$head $(echo "$files" | commas) $3 |" rule="$rule---:|"
        done
        echo
        echo "Where the time goes: median ms from the supervisor's previous trace mark to this one."
        echo
        echo "| up to mark |$head"
        echo "|---|$rule"
        # shellcheck disable=SC2086 # one file per tree
        awk -F'\t' 'FNR == 1 { k++ } { if (!($1 in seen)) { seen[$1] = 1; order[++n] = $1 } v[$1, k] = $2 }
                    END { for (i = 1; i <= n; i++) { printf "| %s |", order[i]
                          for (j = 1; j <= k; j++) printf " %s |", ((order[i], j) in v) ? v[order[i], j] : "-"
                          print "" } }' $cols
}

# 3. Change size: txbox against a shadow-git checkpoint of the same change.
section_change() {
        local c="$T/chg" d
        mktree "$c/txbox" "$BASE"
        for d in keep plain git; do
                mkdir -p "$c/$d/state" && cp -a "$c/txbox/ws" "$c/$d/ws"
        done
        local git="git --git-dir=$c/shadow.git --work-tree=."
        (cd "$c/git/ws" && $git init -q && $git config user.email bench@txbox &&
                $git config user.name bench && $git config gc.auto 0 && $git add -A && $git commit -q -m base)
        local reset="rm -rf $c/git/ws/new && cd $c/git/ws && $git add -A && { $git diff --cached --quiet || $git commit -q -m reset; }"
        local n reps
        for n in $CHANGES; do
                reps=$N
                [ "$n" -ge 1000 ] && reps=$NH
                "$ABRUN" -q -t "$T/change.$n.tsv" "$reps" \
                        --prep="rm -rf $c/plain/ws/new" "plain=cd $c/plain/ws && $MK new $n" \
                        --prep="rm -rf $c/txbox/ws/new" "txbox=cd $c/txbox/ws && TXBOX_TRACE=1 $TX --state $c/txbox/state run -- $MK new $n 2>$T/trace/chg$n.\$ABRUN_RUN" \
                        --prep="rm -rf $c/keep/ws/new && cd $c/keep/ws && $TX --state $c/keep/state run --commit=keep --report=$c/keep.json -- $MK new $n 2>/dev/null && sed -n '$IDSED' $c/keep.json >$c/keep.id" \
                        "keep=read id <$c/keep.id && $TX -C $c/keep/ws --state $c/keep/state commit \"\$id\" >/dev/null" \
                        --prep="$reset" "shadow=cd $c/git/ws && $MK new $n && $git add -A && $git commit -q --allow-empty -m checkpoint" \
                        --prep="$reset && $MK new $n" "ckpt=cd $c/git/ws && $git add -A && $git commit -q --allow-empty -m checkpoint"
        done
        echo
        echo "## Change size: txbox against a shadow-git checkpoint ($N runs of 0 and 1 file, $NH of more)"
        echo
        echo "Workspace of $(echo "${BASE%:*}" | commas) files; the change is one process (bench/mkfiles.sh, awk) writing N new"
        echo "files in a new directory. *plain*: the command alone, no sandbox, nothing kept. *shadow git*:"
        echo "the command run plainly, then \`git add -A && git commit\` into a shadow repository (separate"
        echo "\`--git-dir\`, auto gc off), as checkpointing agents do. *commit phase*: TXBOX_TRACE marks"
        echo "\"evaluated\" to \"decided\" in \`txbox run\`. *git checkpoint*: the \`git add -A && git commit\`"
        echo "alone. *txbox commit*: \`txbox commit ID\`, its own process, of a \`txbox run --commit=keep\`."
        echo
        echo "| files changed | plain | txbox run | shadow git | txbox run / shadow git | commit phase | git checkpoint | txbox commit |"
        echo "|---:|---:|---:|---:|---:|---:|---:|---:|"
        local f tx sh cm
        : >"$OUT/change.dat"
        for n in $CHANGES; do
                f="$T/change.$n.tsv"
                tx=$(field "$f" txbox 2) sh=$(field "$f" shadow 2) cm=$(commit_ms "$T/trace/chg$n".*)
                echo "| $(echo "$n" | commas) | $(field "$f" plain 2) | $tx | $sh | $(ratio "$tx" "$sh") | $cm | $(field "$f" ckpt 2) | $(field "$f" keep 2) |"
                echo "$n $(field "$f" plain 2) $tx $sh $cm $(field "$f" ckpt 2) $(field "$f" keep 2)" >>"$OUT/change.dat"
        done
        phase_table chg "$CHANGES" changed
}

# 4. Peak memory of the supervisor (3 runs of each, largest value).  peak NAME PREP CMD...:
# PREP (a shell string) runs first in the workspace; @ID@ in CMD becomes the id of the
# transaction it left pending (--report=$T/r.json).
peak() {
        local name=$1 prep=$2 i id rss=- max=- timer=()
        shift 2
        [ -x /usr/bin/time ] && timer=(/usr/bin/time -a -o "$T/time.out" -f %M)
        : >"$T/rss.out" && : >"$T/time.out" && echo '{}' >"$T/r.json"
        for i in 1 2 3; do
                (cd "$T/chg/txbox/ws" && ABRUN_RUN=$i sh -c "$prep")
                id=$(sed -n "$IDSED" "$T/r.json")
                (cd "$T/chg/txbox/ws" && PEAKRSS_OUT="$T/rss.out" LD_PRELOAD="$T/peakrss.so" \
                        "${timer[@]}" "${@/@ID@/$id}" >/dev/null 2>&1)
        done
        [ -s "$T/rss.out" ] && rss=$(awk '$2 > m { m = $2 } END { print m }' "$T/rss.out")
        [ -s "$T/time.out" ] && max=$(awk '$1 > m { m = $1 } END { print m }' "$T/time.out")
        echo "| $name | $rss | $max |"
}

section_memory() {
        local ws="$T/chg/txbox" k="$T/chg/keep" big
        big=$(echo "$BIG" | commas)
        echo
        echo "## Peak memory (3 runs each, largest)"
        echo
        echo "*supervisor*: VmHWM of the txbox process itself, read at its exit by bench/peakrss.c (LD_PRELOAD);"
        echo "*largest process*: \`/usr/bin/time -f %M\`, the ru_maxrss that wait4 reports: the largest of"
        echo "txbox and the sandbox's processes it waited for (init, the program)."
        echo
        echo "| case | supervisor KiB | largest process KiB |"
        echo "|---|---:|---:|"
        peak "txbox run -- true" true "$TX" -C "$ws/ws" --state "$ws/state" run -- true
        peak "txbox run, one-file change" true "$TX" -C "$ws/ws" --state "$ws/state" run -- sh -c 'echo x >>d0/f0.txt'
        peak "txbox run, $big-file change" "rm -rf new" "$TX" -C "$ws/ws" --state "$ws/state" run -- "$MK" new "$BIG"
        peak "txbox commit of a pending $big-file change" \
                "rm -rf $k/ws/new && cd $k/ws && $TX --state $k/state run --commit=keep --report=$T/r.json -- $MK new $BIG 2>/dev/null" \
                "$TX" -C "$k/ws" --state "$k/state" commit @ID@
        echo
        echo "Target of issue 7: under 10 MB (10,240 KiB) for the supervisor during a 10,000-file change."
}

# 5. A real workload: building txbox itself from clean (git HEAD), inside txbox and plainly.
section_build() {
        local b="$T/build"
        mkdir -p "$b/ws" "$b/state"
        git -C "$ROOT" archive HEAD | tar -x -C "$b/ws"
        local make
        make="make -j$(nproc) BUILD=b all test-bins >/dev/null 2>&1"
        "$ABRUN" -q -w "$WB" -t "$T/build.tsv" -r "$T/build.raw" "$NB" \
                --prep="rm -rf $b/ws/b" "plain=cd $b/ws && $make" \
                --prep="rm -rf $b/ws/b" "txbox=cd $b/ws && TXBOX_TRACE=1 $TX --state $b/state run --timeout=3600 -- sh -c '$make' 2>$T/trace/build.\$ABRUN_RUN"
        local p x
        p=$(field "$T/build.tsv" plain 2) x=$(field "$T/build.tsv" txbox 2)
        echo
        echo "## Real workload: make -j$(nproc) of txbox from clean ($NB runs each)"
        echo
        echo "The source at git HEAD (\`git archive\`) in a throwaway workspace; \`make all test-bins\` (txbox and the unit"
        echo "test binaries); the build directory is removed before each run. Inside txbox the whole build"
        echo "is one transaction, committed at its end."
        echo
        echo "| case | median ms | min ms | max ms |"
        echo "|---|---:|---:|---:|"
        echo "| plain make | $p | $(field "$T/build.tsv" plain 3) | $(field "$T/build.tsv" plain 4) |" | sed 's/\.[0-9]*//g'
        echo "| txbox run -- make | $x | $(field "$T/build.tsv" txbox 3) | $(field "$T/build.tsv" txbox 4) |" | sed 's/\.[0-9]*//g'
        echo
        local f execs
        execs=$(for f in "$T/trace/build".*; do case $f in *.0) ;; *) grep -c ' ms exec check$' "$f" || true ;; esac; done | median %.0f)
        echo "In txbox (TXBOX_TRACE=1): commit phase $(commit_ms "$T/trace/build".*) ms; $execs \"exec check\" marks (the supervisor's"
        echo "check of each execve in the sandbox) per build."
        echo
        # Each txbox build ran right after a plain one: the ratio within each pair cancels the
        # slow drifts of a shared machine better than the ratio of the medians does.
        local pairs
        pairs=$(awk -F'\t' '$1 == "plain" { p[$2] = $3 } $1 == "txbox" && p[$2] { print ($3 / p[$2] - 1) * 100 }' "$T/build.raw" | median %+.1f%%)
        echo "Overhead: **$pairs** (median of the $NB pairs run one after the other; target of issue 7: at most 2%);"
        echo "$(awk -v a="$x" -v b="$p" 'BEGIN { printf "%+.1f%%", (a / b - 1) * 100 }') from the medians, $(awk -v a="$(field "$T/build.tsv" txbox 3)" -v b="$(field "$T/build.tsv" plain 3)" 'BEGIN { printf "%+.1f%%", (a / b - 1) * 100 }') from the minimums."
}

# 6. The long-lived server path: txbox mcp and txbox agent, CALLS commands (BENCH_CALLS,
# default 20) per session, against as many bare execs of `sh -c true`.  Each case is a whole
# session (a server started, CALLS calls, ended) in one rotation with the same session
# without calls (MCP: initialize only; agent: CALLS calls of a tool that does not exist, the
# same model turns without a program), so that (session - empty) / CALLS is what one command costs, wall and
# CPU, over the server's own start.  Then bench/mcp_bench.sh: latency of the official SDK's
# callTool, one call after the other.
CALLS=${BENCH_CALLS:-20}
server_cases() { # DIR: workspace and requests for the MCP cases
        local d=$1 i
        mktree "$d" 100:10
        for n in 0 "$CALLS"; do
                {
                        echo '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}'
                        for ((i = 1; i <= n; i++)); do
                                echo "{\"jsonrpc\":\"2.0\",\"id\":$i,\"method\":\"tools/call\",\"params\":{\"name\":\"run_command\",\"arguments\":{\"command\":\"true\"}}}"
                        done
                } >"$d/req$n"
        done
}
# per_call TSV A B: (A - B) / CALLS for column F (2: median, 7: CPU).
per_call() {
        awk -v a="$(field "$1" "$2" "$4")" -v b="$(field "$1" "$3" "$4")" -v n="$CALLS" \
                'BEGIN { if (a == "" || b == "") print "-"; else printf "%.2f", (a - b) / n }'
}
section_mcp() {
        local d="$T/mcp" f="$T/mcp.tsv"
        server_cases "$d"
        local loop="i=0; while [ \$i -lt $CALLS ]; do sh -c true; i=\$((i + 1)); done"
        local empty="i=0; while [ \$i -lt $CALLS ]; do i=\$((i + 1)); done"
        echo
        echo "## The long-lived server path: txbox mcp and txbox agent ($N sessions each, $CALLS commands a session)"
        echo
        echo "A session is a server started, $CALLS commands (\`true\`), and its end; each in one rotation with"
        echo "the same session without the commands, so that (session - empty session) / $CALLS is what"
        echo "one command costs over the server's start. *MCP*: JSON-RPC requests on a pipe to \`txbox mcp\`,"
        echo "run_command of \`true\`; *agent*: \`txbox agent\` against a scripted model on loopback"
        echo "(bench/fake_model.py), run_command of \`true\` against calls of a tool that does not exist (the"
        echo "same model turns, no program). *Bare*: \`sh -c true\` from a shell loop. CPU: the task-clock of the whole"
        echo "tree (the server, its sandboxes; not the model)."
        echo
        "$ABRUN" -c -t "$f" "$N" \
                "bare: $CALLS x sh -c true=sh -c '$loop'" \
                "bare: the loop alone=sh -c '$empty'" \
                "mcp: $CALLS run_command calls=$TX -C $d/ws --state $d/state mcp <$d/req$CALLS >/dev/null" \
                "mcp: initialize only=$TX -C $d/ws --state $d/state mcp <$d/req0 >/dev/null"
        echo
        local bw bc mw mc
        bw=$(per_call "$f" "bare: $CALLS x sh -c true" "bare: the loop alone" 2)
        bc=$(per_call "$f" "bare: $CALLS x sh -c true" "bare: the loop alone" 7)
        mw=$(per_call "$f" "mcp: $CALLS run_command calls" "mcp: initialize only" 2)
        mc=$(per_call "$f" "mcp: $CALLS run_command calls" "mcp: initialize only" 7)
        echo "Per command: bare exec **$bw ms** (CPU $bc ms); MCP run_command **$mw ms** (CPU $mc ms):"
        echo "**$(awk -v a="$mw" -v b="$bw" 'BEGIN { printf "%+.2f", a - b }') ms** over a bare exec, CPU $(awk -v a="$mc" -v b="$bc" 'BEGIN { printf "%+.2f", a - b }') ms (target of issue 32: at most +2 ms)."
        echo
        echo "The official MCP SDK client's callTool, one call after the other (bench/mcp_bench.sh):"
        echo
        cd "$ROOT"
        BUILD="$BUILD" "$ROOT/bench/mcp_bench.sh" "$N" 2>&1 | sed 's/^/    /' || true
}

section_agent() {
        local d="$T/agent" f="$T/agent.tsv" port
        echo
        echo "### txbox agent ($N sessions each, $CALLS commands a session)"
        echo
        if ! [ -x /usr/bin/python3 ]; then
                echo "Skipped: the scripted model needs /usr/bin/python3."
                return 0
        fi
        mktree "$d" 100:10
        /usr/bin/python3 "$ROOT/bench/fake_model.py" "$d/port" &
        local srv=$!
        for _ in $(seq 100); do [ -s "$d/port" ] && break; sleep 0.05; done
        port=$(cat "$d/port" 2>/dev/null)
        local agent="$TX -C $d/ws --state $d/state agent --endpoint http://127.0.0.1:$port/v1 --model bench --no-baseline --max-steps $((CALLS + 2)) --max-refusals $((CALLS + 1))"
        local loop="i=0; while [ \$i -lt $CALLS ]; do sh -c true; i=\$((i + 1)); done"
        local empty="i=0; while [ \$i -lt $CALLS ]; do i=\$((i + 1)); done"
        "$ABRUN" -c -t "$f" "$N" \
                "bare: $CALLS x sh -c true=sh -c '$loop'" \
                "bare: the loop alone=sh -c '$empty'" \
                "agent: $CALLS run_command calls=$agent 'run $CALLS' >/dev/null 2>&1" \
                "agent: $CALLS unknown-tool calls=$agent 'noop $CALLS' >/dev/null 2>&1"
        kill "$srv" 2>/dev/null || true
        wait "$srv" 2>/dev/null || true
        local bw bc aw ac
        bw=$(per_call "$f" "bare: $CALLS x sh -c true" "bare: the loop alone" 2)
        bc=$(per_call "$f" "bare: $CALLS x sh -c true" "bare: the loop alone" 7)
        aw=$(per_call "$f" "agent: $CALLS run_command calls" "agent: $CALLS unknown-tool calls" 2)
        ac=$(per_call "$f" "agent: $CALLS run_command calls" "agent: $CALLS unknown-tool calls" 7)
        echo
        echo "Per command: bare exec **$bw ms** (CPU $bc ms); the agent's run_command over a call it refuses"
        echo "**$aw ms** (CPU $ac ms): **$(awk -v a="$aw" -v b="$bw" 'BEGIN { printf "%+.2f", a - b }') ms** over a bare exec, CPU $(awk -v a="$ac" -v b="$bc" 'BEGIN { printf "%+.2f", a - b }') ms."
}

plot() {
        local png=${PLOT_OUT:-$OUT/benchmarks.png}
        echo
        if [ ! -s "$OUT/change.dat" ] || [ ! -s "$OUT/wssize.dat" ]; then
                echo "No plot: it needs the sections wssize and change."
                return 0
        fi
        if ! command -v gnuplot >/dev/null; then
                echo "No plot: gnuplot is not installed (scripts/deps.sh --bench installs gnuplot-nox)."
                return 0
        fi
        if gnuplot -e "changes='$OUT/change.dat'; trees='$OUT/wssize.dat'; out='$png'" "$ROOT/bench/plot.gp" 2>"$T/gnuplot.err"; then
                echo "Plot: $png (data: $OUT)"
        else
                echo "No plot: gnuplot failed: $(head -3 "$T/gnuplot.err")"
        fi
}

# Each section in the order of the report; how long each took goes to stderr.
for s in ${BENCH_SECTIONS:-exec disk wssize change memory build mcp agent}; do
        t0=$SECONDS
        "section_$s"
        echo "bench: $s took $((SECONDS - t0)) s" >&2
done
plot
