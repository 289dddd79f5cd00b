#!/bin/bash
# Sessions with the crash discipline of a commit: a crash (failpoint) at every step of keeping
# and dropping a savepoint, of rollback --to, of the fold at commit and of a session's
# rollback, then SIGKILL at random moments of run --tx, rollback --to, commit and rollback of
# sessions of 1,000-file steps (100 in a short run).  After txbox recover the session holds whole savepoints only
# (checked by committing it: the workspace is exactly one of the allowed outcomes, never a
# mix, and no file of a killed or rolled-back step appears).  TXBOX_STRESS=1: 200 kills each.
. "$(dirname "$0")/lib.sh"
TXBOX=$TXBOX_HOOKS # this suite drives failpoints: the test variant (lib.sh)

S1='echo a >a.txt && mkdir -p d/e && echo x >d/e/x && echo one >>README'
S2='rm d/e/x && echo y >d/e/y && chmod 700 d && rm docs/b.txt && rm -rf src && mkdir src && echo re >src/re.c &&
    echo a2 >a.txt'
S3='echo three >t.txt && rm -rf d && mkdir d && echo new >d/n'

state_dir() { ls -d "$HOME"/.local/state/txbox/*/ | head -1; }
outcome() { tx show --json "$1" | grep -o '"outcome": *"[a-z_]*"' | sed 's/.*"\([a-z_]*\)"$/\1/'; }
# A fresh workspace and a session of STEPs, one savepoint each; prints the session's id.
session() {
        local id s
        new_ws
        id=$(tx begin)
        for s in "$@"; do tx run --tx "$id" -- sh -c "$s" >/dev/null 2>&1 || echo "# a step failed: $s" >&2; done
        echo "$id"
}
# The workspace after a session of STEPs, committed.
ref() { local id; id=$(session "$@"); tx commit "$id" >/dev/null; tree_hash "$WS"; }
# After recovery nothing but whole savepoints is left in the session, and no claim.
tidy() {
        local d; d="$(state_dir)"
        if [ -d "$d/tx/$1/sp" ] && ls -A "$d/tx/$1/sp" | grep -qv '^[1-9][0-9]*$'; then
                echo "# session $1 keeps leftovers: $(ls -A "$d/tx/$1/sp" | tr '\n' ' ')"; return 1
        fi
        ! ls -A "$d/active" | grep -q . || { echo "# a claim is left: $(ls -A "$d/active")"; return 1; }
}

new_ws
orig=$(tree_hash "$WS")
h1=$(ref "$S1")
h12=$(ref "$S1" "$S2")
h123=$(ref "$S1" "$S2" "$S3")
ok "reference: the three sessions differ" test "$h1" != "$h12" -a "$h12" != "$h123" -a "$h1" != "$orig"

# ---- failpoints: a crash at every step ----

# Keeping a savepoint: sync, rename to its number, the row.  It counts only past the rename.
steps=0 bad=0 kept=0
for k in $(seq 0 10); do
        id=$(session "$S1")
        TXBOX_FAILPOINT=savepoint:$k "$TXBOX" -C "$WS" run --tx "$id" -- sh -c "$S2" >/dev/null 2>&1
        rc=$?
        [ $rc -eq 0 ] && break
        [ $rc -eq 137 ] || { echo "# keep step $k: status $rc"; bad=$((bad + 1)); break; }
        steps=$((steps + 1))
        tx recover >/dev/null || bad=$((bad + 1))
        tidy "$id" || bad=$((bad + 1))
        n=$(outcome "$id")
        tx commit "$id" >/dev/null || bad=$((bad + 1))
        h=$(tree_hash "$WS")
        if [ "$h" = "$h12" ]; then kept=$((kept + 1))
        elif [ "$h" != "$h1" ]; then echo "# keep step $k: a mixed tree $h (outcome $n)"; bad=$((bad + 1)); fi
done
ok "a crash at each of $steps steps of keeping a savepoint leaves whole savepoints" test "$bad" -eq 0 -a "$steps" -ge 3
is "$kept" 1 "only the crash past its rename keeps it"

# Dropping a failed step's savepoint: a crash before its removal drops it all the same.
id=$(session "$S1")
TXBOX_FAILPOINT=savepoint:0 "$TXBOX" -C "$WS" run --tx "$id" -- sh -c "$S2; exit 3" >/dev/null 2>&1
is "$?" 137 "a crash while a failed step's savepoint is dropped"
tx recover >/dev/null
ok "recovery removes it" tidy "$id"
tx commit "$id" >/dev/null
is "$(tree_hash "$WS")" "$h1" "the commit has nothing of the failed step"

# A savepoint left half-run (sp/N.new) and a number past a gap (a savepoint half removed by
# an older txbox, or planted): neither may ever come to count.
id=$(session "$S1")
sp="$(state_dir)tx/$id/sp"
mkdir -p "$sp/2.new/upper" "$sp/3/upper" && echo half >"$sp/2.new/upper/half.txt" && echo ghost >"$sp/3/upper/ghost.txt"
tx run --tx "$id" -- sh -c "$S2" >/dev/null 2>&1
is "$(ls -A "$sp" | tr '\n' ' ')" "1 2 " "the next step tidied the session: savepoints 1 and 2, nothing else"
tx commit "$id" >/dev/null
is "$(tree_hash "$WS")" "$h12" "and its commit has neither the half-run step nor the one past the gap"

# rollback --to 1 of three savepoints: decided by its durable marker, then each savepoint
# above leaves the numbered range in one rename, from the top.
steps=0 bad=0 dropped=0
for k in $(seq 0 20); do
        id=$(session "$S1" "$S2" "$S3")
        TXBOX_FAILPOINT=rollback:$k "$TXBOX" -C "$WS" rollback "$id" --to 1 >/dev/null 2>&1
        rc=$?
        [ $rc -eq 0 ] && break
        [ $rc -eq 137 ] || { echo "# rollback step $k: status $rc"; bad=$((bad + 1)); break; }
        steps=$((steps + 1))
        tx recover >/dev/null || bad=$((bad + 1))
        tidy "$id" || bad=$((bad + 1))
        msg=$(tx show --json "$id")
        tx commit "$id" >/dev/null || bad=$((bad + 1))
        h=$(tree_hash "$WS")
        if [ "$h" = "$h1" ]; then
                dropped=$((dropped + 1))
                case "$msg" in *'"message": "session with 1 savepoint:'*) ;;
                *) echo "# rollback step $k: the row does not say 1 savepoint: $msg"; bad=$((bad + 1)) ;; esac
        elif [ "$h" != "$h123" ]; then echo "# rollback step $k: a mixed tree $h"; bad=$((bad + 1)); fi
done
ok "a crash at each of $steps steps of rollback --to leaves before or after" test "$bad" -eq 0 -a "$steps" -ge 5
is "$dropped" $((steps - 1)) "every crash past the marker completes the rollback"

# A crash in the recovery that finishes a decided rollback --to, and in the tidy of a load
# that removes a half-run step: the next one finishes each.
id=$(session "$S1" "$S2" "$S3")
TXBOX_FAILPOINT=rollback:1 "$TXBOX" -C "$WS" rollback "$id" --to 1 >/dev/null 2>&1
TXBOX_FAILPOINT=recover:1 "$TXBOX" -C "$WS" recover >/dev/null 2>&1
is "$?" 137 "a crash in the recovery of a decided rollback --to"
tx recover >/dev/null
is "$(ls -A "$(state_dir)tx/$id/sp" | tr '\n' ' ')" "1 " "the next recovery finished it"
mkdir -p "$(state_dir)tx/$id/sp/2.new/upper" && echo half >"$(state_dir)tx/$id/sp/2.new/upper/half.txt"
TXBOX_FAILPOINT=tidy:0 "$TXBOX" -C "$WS" run --tx "$id" -- true >/dev/null 2>&1
is "$?" 137 "a crash in the tidy of a session as it is loaded"
tx commit "$id" >/dev/null
is "$(tree_hash "$WS")" "$h1" "the commit after it has savepoint 1 only"

# The fold at commit: each savepoint retired once folded; recovery resumes the fold and
# the session stays pending; committing it then applies every savepoint.
steps=0 bad=0
for k in $(seq 0 30); do
        id=$(session "$S1" "$S2" "$S3")
        TXBOX_FAILPOINT=fold:$k "$TXBOX" -C "$WS" commit "$id" >/dev/null 2>&1
        rc=$?
        [ $rc -eq 0 ] && break
        [ $rc -eq 137 ] || { echo "# fold step $k: status $rc"; bad=$((bad + 1)); break; }
        steps=$((steps + 1))
        tx recover >/dev/null || bad=$((bad + 1))
        tidy "$id" || bad=$((bad + 1))
        [ "$(tree_hash "$WS")" = "$orig" ] || { echo "# fold step $k: the workspace changed"; bad=$((bad + 1)); }
        [ "$(outcome "$id")" = pending ] || { echo "# fold step $k: outcome $(outcome "$id")"; bad=$((bad + 1)); }
        tx commit "$id" >/dev/null || bad=$((bad + 1))
        [ "$(tree_hash "$WS")" = "$h123" ] || { echo "# fold step $k: the commit after it is not whole"; bad=$((bad + 1)); }
done
ok "a crash at each of $steps steps of the fold: resumed, and the commit applies it all" test "$bad" -eq 0 -a "$steps" -ge 10

# A crash while the folded layer is prepared for the commit (overlay's markers stripped),
# before the journal: that layer can never be judged again, so recovery rolls the session
# back, nothing applied; a commit that fails there rolls it back itself, saying why.
for k in 0 1; do
        id=$(session "$S1" "$S2" "$S3")
        TXBOX_FAILPOINT=prepare:$k "$TXBOX" -C "$WS" commit "$id" >/dev/null 2>&1
        is "$?" 137 "a crash at step $k of preparing the folded layer"
        tx recover >/dev/null
        is "$(outcome "$id"):$(tree_hash "$WS")" "rolled_back:$orig" "recovery rolls it back, nothing applied"
done
id=$(session "$S1" "$S2" "$S3")
TXBOX_FAILPOINT=prepare:1:enospc "$TXBOX" -C "$WS" commit "$id" >/dev/null 2>&1
is "$?" 1 "a commit that fails while its layer is prepared"
like "$(tx show --json "$id")" \
        '"outcome": "rolled_back".*failed after its layer was prepared.*nothing of it was applied' \
        "is rolled back at once, saying why"
is "$(tree_hash "$WS")" "$orig" "nothing was applied"

# A crash in the recovery that resumes a fold cut short: the next one finishes it.
id=$(session "$S1" "$S2" "$S3")
TXBOX_FAILPOINT=fold:5 "$TXBOX" -C "$WS" commit "$id" >/dev/null 2>&1
TXBOX_FAILPOINT=fold:1 "$TXBOX" -C "$WS" recover >/dev/null 2>&1
is "$?" 137 "a crash in the recovery of a fold"
tx recover >/dev/null
tx commit "$id" >/dev/null
is "$(tree_hash "$WS")" "$h123" "the next recovery finished it and the commit applies every savepoint"

# The rollback of a whole session leaves tx/ in one rename before its removal.
id=$(session "$S1" "$S2")
TXBOX_FAILPOINT=abort:0 "$TXBOX" -C "$WS" rollback "$id" >/dev/null 2>&1
is "$?" 137 "a crash in the removal of a rolled-back session"
tx recover >/dev/null
is "$(outcome "$id")" rolled_back "recovery finishes the rollback"
ok "nothing is left of it" test ! -e "$(state_dir)tx/$id"
is "$(tree_hash "$WS")" "$orig" "and the workspace is untouched"

# ---- SIGKILL at random moments ----
trials=4 N=100
[ -n "${TXBOX_STRESS:-}" ] && trials=200 N=1000
BIG='for i in $(seq 1 '$N'); do echo "$i" >"g$i"; done; echo big >>README; rm docs/a.txt'
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
late=0
kill_in() { # MS PID: SIGKILL after MS ms; late counts the runs that had ended before it
        sleep "$(printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000)))"
        kill -9 "$2" 2>/dev/null
        wait "$2" 2>/dev/null
        [ $? -eq 137 ] && ended=0 || ended=1
        late=$((late + ended))
}
wait_for() { # FILE PID: until FILE is there (or about 10 s went by)
        local n=0
        while [ ! -e "$1" ] && [ $n -lt 5000 ]; do sleep 0.002; n=$((n + 1)); done
}
# check ID ALLOWED...: recover, commit the session when it is pending, and find the
# workspace among the allowed trees; prints the index of the one found.
check() {
        local id=$1 i=0 h o
        shift
        tx recover >/dev/null || echo "# recover failed" >&2
        tidy "$id" >&2 || { echo x; return; }
        o=$(outcome "$id")
        case "$o" in pending) tx commit "$id" >/dev/null 2>&1 ;; committed | rolled_back) ;;
        *) echo "# the row is not settled: $o" >&2; echo x; return ;; esac
        h=$(tree_hash "$WS")
        for a in "$@"; do [ "$h" = "$a" ] && { echo $i; return; }; i=$((i + 1)); done
        echo "# a mixed tree $h (allowed: $*)" >&2
        echo x
}
h1big=$(ref "$S1" "$BIG")

# run --tx of an N-file step, kept (trials 1 and 2 mod 4) or failing (3 and 0): killed at a
# random moment of the whole run (odd trials), or once the program wrote its last file (even
# trials): while the step is judged and its savepoint kept or dropped.
id=$(session "$S1")
t0=$(date +%s%N)
"$TXBOX" -C "$WS" run --tx "$id" -- sh -c "$BIG" >/dev/null 2>&1 &
pid=$!
wait_for "$(state_dir)tx/$id/sp/2.new/upper/README" $pid
t1=$(date +%s%N)
wait $pid
run_ms=$(ms "$t0") tail_ms=$(ms "$t1")
bad=0 n0=0 n1=0 late=0
for i in $(seq 1 $trials); do
        id=$(session "$S1")
        case $((i % 4)) in 1 | 2) step=$BIG ;; *) step="$BIG; exit 3" ;; esac
        "$TXBOX" -C "$WS" run --tx "$id" -- sh -c "$step" >/dev/null 2>&1 &
        pid=$!
        if [ $((i % 2)) -eq 1 ]; then
                delay=$((RANDOM % (run_ms * 3 / 2 + 20)))
        else
                wait_for "$(state_dir)tx/$id/sp/2.new/upper/README" $pid
                delay=$((RANDOM % (tail_ms * 3 / 2 + 10)))
        fi
        kill_in "$delay" $pid
        case $((i % 4)) in 1 | 2) c=$(check "$id" "$h1" "$h1big") ;; *) c=$(check "$id" "$h1") ;; esac
        case "$c" in 0) n0=$((n0 + 1)) ;; 1) n1=$((n1 + 1)) ;;
        *) echo "# run --tx trial $i (kill at $delay ms): not whole"; bad=$((bad + 1)) ;; esac
done
echo "# run --tx: $trials kills (run ${run_ms} ms, ${tail_ms} ms after its last write): $n0 without the step," \
     "$n1 with it, $late ended before the kill"
ok "SIGKILL in run --tx and in a failed step's drop: whole savepoints only ($trials trials)" test "$bad" -eq 0

# rollback --to 1 of three savepoints of N files each.
B1='mkdir b1 && for i in $(seq 1 '$N'); do echo "$i" >"b1/f$i"; done'
B2='for i in $(seq 1 '$N'); do echo two >>"b1/f$i"; done; rm docs/b.txt'
B3='mkdir b3 && for i in $(seq 1 '$N'); do echo "$i" >"b3/f$i"; done; echo three >>README'
hb1=$(ref "$B1")
hb123=$(ref "$B1" "$B2" "$B3")
id=$(session "$B1" "$B2" "$B3")
t0=$(date +%s%N); tx rollback "$id" --to 1 >/dev/null; rb_ms=$(ms "$t0")
bad=0 n0=0 n1=0 late=0
for i in $(seq 1 $trials); do
        id=$(session "$B1" "$B2" "$B3")
        "$TXBOX" -C "$WS" rollback "$id" --to 1 >/dev/null 2>&1 &
        delay=$((RANDOM % (rb_ms * 3 / 2 + 10)))
        kill_in "$delay" $!
        case "$(check "$id" "$hb123" "$hb1")" in 0) n0=$((n0 + 1)) ;; 1) n1=$((n1 + 1)) ;;
        *) echo "# rollback --to trial $i (kill at $delay ms): not whole"; bad=$((bad + 1)) ;; esac
done
echo "# rollback --to: $trials kills (${rb_ms} ms): $n0 before, $n1 after, $late ended before the kill"
ok "SIGKILL in rollback --to of 3 x $N files: before or after, never a mix ($trials trials)" test "$bad" -eq 0

# The commit of a session (fold, then the journal) and its rollback.
hfull=$(ref "$BIG" "$S1" "$S2")
id=$(session "$BIG" "$S1" "$S2")
t0=$(date +%s%N); tx commit "$id" >/dev/null; commit_ms=$(ms "$t0")
id=$(session "$BIG" "$S1" "$S2")
t0=$(date +%s%N); tx rollback "$id" >/dev/null; abort_ms=$(ms "$t0")
bad=0 n0=0 n1=0 nr=0 na=0 late_c=0 late_a=0
for i in $(seq 1 $trials); do
        id=$(session "$BIG" "$S1" "$S2")
        "$TXBOX" -C "$WS" commit "$id" >/dev/null 2>&1 &
        delay=$((RANDOM % (commit_ms * 3 / 2 + 10)))
        kill_in "$delay" $!
        late_c=$((late_c + ended))
        tx recover >/dev/null
        was=$(outcome "$id")
        # Killed after its layer was prepared for the commit (overlay's markers stripped) and
        # before its journal was complete, a commit is rolled back: nothing of it applied.
        case "$was:$(check "$id" "$hfull" "$orig")" in
        pending:0) n0=$((n0 + 1)) ;; committed:0) n1=$((n1 + 1)) ;; rolled_back:1) nr=$((nr + 1)) ;;
        *) echo "# commit trial $i (kill at $delay ms): not whole"; bad=$((bad + 1)) ;; esac
        id=$(session "$BIG" "$S1" "$S2")
        "$TXBOX" -C "$WS" rollback "$id" >/dev/null 2>&1 &
        delay=$((RANDOM % (abort_ms * 3 / 2 + 10)))
        kill_in "$delay" $!
        late_a=$((late_a + ended))
        tx recover >/dev/null
        o=$(outcome "$id")
        if [ "$o" = rolled_back ]; then
                na=$((na + 1))
                [ "$(tree_hash "$WS")" = "$orig" ] || { echo "# rollback trial $i: the workspace changed"; bad=$((bad + 1)); }
        elif [ "$(check "$id" "$hfull")" != 0 ]; then
                echo "# rollback trial $i (kill at $delay ms): the session left is not whole"; bad=$((bad + 1))
        fi
done
echo "# commit: $trials kills (${commit_ms} ms): $n0 still pending (then committed whole), $n1 committed," \
     "$nr rolled back, $late_c ended before the kill; rollback: $trials kills (${abort_ms} ms): $na rolled back," \
     "the rest pending and whole; $late_a ended before the kill"
ok "SIGKILL in a session's commit and rollback: whole every time ($trials trials each)" test "$bad" -eq 0

done_testing
