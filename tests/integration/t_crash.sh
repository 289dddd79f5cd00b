#!/bin/bash
# Crash safety: a crash at every step of a multi-file commit and of an undo, and SIGKILL at
# random moments of a 2,000-file transaction; after txbox recover the workspace is whole
# (exactly before or exactly after), the log agrees, and the next transaction runs.
. "$(dirname "$0")/lib.sh"
TXBOX=$TXBOX_HOOKS # this suite drives failpoints: the test variant (lib.sh)

CHANGE='echo 1 >>README && echo new >new1 && mkdir -p newdir/sub && echo n >newdir/sub/f &&
        rm docs/b.txt && rm -rf src && mkdir src && echo re >src/re.c && chmod 700 docs && ln -sfn docs link'

new_ws
before=$(tree_hash "$WS")
tx run -- sh -c "$CHANGE" || echo "# the reference run failed"
after=$(tree_hash "$WS")
tx undo >/dev/null
is "$(tree_hash "$WS")" "$before" "reference: undo restores the original"

outcome_of_last() { tx log --json -n 1 | grep -o '"outcome": *"[a-z_]*"' | sed 's/.*"\([a-z_]*\)"$/\1/'; }

# Crash before every rename, marker and audit step of the commit.  The journal is written
# before the first of them and decides the commit: recovery completes it every time.
# A file replaced by a file goes in by one exchange: it is never missing, even mid-commit.
steps=0 bad=0 forward=0 missing=0
for k in $(seq 0 60); do
        TXBOX_FAILPOINT=commit:$k "$TXBOX" -C "$WS" run -- sh -c "$CHANGE" 2>/dev/null
        rc=$?
        [ $rc -eq 0 ] && break # past the last failpoint: the commit completed normally
        [ $rc -eq 137 ] || { echo "# run failed with status $rc at step $k"; bad=$((bad + 1)); break; }
        steps=$((steps + 1))
        [ -f "$WS/README" ] || { echo "# crash at commit step $k: README missing"; missing=$((missing + 1)); }
        tx recover >/dev/null || bad=$((bad + 1))
        h=$(tree_hash "$WS")
        o=$(outcome_of_last)
        if [ "$h" = "$before" ] && [ "$o" = rolled_back ]; then :
        elif [ "$h" = "$after" ] && [ "$o" = committed ]; then
                forward=$((forward + 1))
                tx undo >/dev/null || bad=$((bad + 1))
        else echo "# crash at commit step $k: rc $rc, tree $h ($before before, $after after), outcome $o"; bad=$((bad + 1)); fi
        [ "$(tree_hash "$WS")" = "$before" ] || { echo "# could not get back to the original after step $k"; bad=$((bad + 1)); break; }
done
ok "a crash at each of $steps commit steps recovers to a whole state" test "$bad" -eq 0 -a "$steps" -ge 10
is "$forward" "$steps" "every one of them completed from the journal (rolled forward)"
is "$missing" 0 "a replaced file was in place after every one of them (one exchange, not two renames)"
is "$(tree_hash "$WS")" "$after" "after the crash loop the uninterrupted commit applied"

# A full disk at every step of the commit (ENOSPC injected): the commit reverts itself, the
# transaction is rolled back, nothing is applied, and the next transaction runs.
tx undo >/dev/null
[ "$(tree_hash "$WS")" = "$before" ] || echo "# not back at the original before the ENOSPC loop"
esteps=0 bad=0
for k in $(seq 0 60); do
        err=$(TXBOX_FAILPOINT=commit:$k:enospc "$TXBOX" -C "$WS" run -- sh -c "$CHANGE" 2>&1)
        rc=$?
        [ $rc -eq 0 ] && break
        esteps=$((esteps + 1))
        if [ $rc -ne 125 ] || ! printf '%s' "$err" | grep -q "No space left on device"; then
                echo "# ENOSPC at step $k: status $rc, message: $err"; bad=$((bad + 1)); break
        fi
        h=$(tree_hash "$WS")
        [ "$h" = "$before" ] || { echo "# ENOSPC at step $k left tree $h"; bad=$((bad + 1)); break; }
        [ "$(outcome_of_last)" = rolled_back ] || { echo "# ENOSPC at step $k: outcome $(outcome_of_last)"; bad=$((bad + 1)); }
done
ok "ENOSPC at each of $esteps commit steps: reverted, nothing applied, one clear line" test "$bad" -eq 0 -a "$esteps" -ge 10
is "$(tree_hash "$WS")" "$after" "after the ENOSPC loop the uninterrupted commit applied"

# A commit that failed (ENOSPC) and was cut short while reverting itself: its journal had
# become "revert", and recovery finishes the revert instead of completing the commit.
tx undo >/dev/null
TXBOX_FAILPOINT=commit:5:enospc,revert:1 "$TXBOX" -C "$WS" run -- sh -c "$CHANGE" >/dev/null 2>&1
is "$?" 137 "a crash in the revert of a failed commit"
ok "the crash left the revert half done" test "$(tree_hash "$WS")" != "$before"
tx recover >/dev/null
is "$(tree_hash "$WS")" "$before" "recovery finishes the revert"
is "$(outcome_of_last)" rolled_back "and the log says rolled back"

# One sync per commit, before its first rename: the renames reach the disk with a later
# sync.  Until then the commit's claim stays as state/settle/BOOT.ID; a reboot (another
# boot id) may have lost renames, and recovery completes such a commit from its journal.
# Simulated: a crash half-way through the renames, its claim moved to an earlier boot's name.
state=$(ls -d "$HOME"/.local/state/txbox/*/ | head -1)
TXBOX_FAILPOINT=commit:4 "$TXBOX" -C "$WS" run -- sh -c "$CHANGE" 2>/dev/null
rc=$?
id=$(ls -t "$state/tx" | head -1)
is "$rc" 137 "a crash in the middle of the renames"
ok "the crash left the renames half done" test "$(tree_hash "$WS")" != "$after"
mv "$state/active/$id" "$state/settle/00000000-0000-0000-0000-000000000000.$id"
tx recover >/dev/null
is "$(tree_hash "$WS")" "$after" "an earlier boot's unsettled commit: recovery completes it"
is "$(outcome_of_last)" committed "and the log says committed"
ok "and its settle entry is gone" test -z "$(ls "$state/settle")"
tx undo >/dev/null
is "$(tree_hash "$WS")" "$before" "the completed commit undoes cleanly"
if boot=$(cat /proc/sys/kernel/random/boot_id 2>/dev/null) && [ -n "$boot" ]; then
        tx run -- sh -c "$CHANGE" >/dev/null 2>&1
        id=$(last_tx)
        is "$(ls "$state/settle")" "$boot.$id" "a commit of this boot leaves its settle entry"
        ok "its upper layer stays in the trash meanwhile" test -d "$state/trash/$id.upper"
        tx run -- true
        ok "a run that commits nothing keeps both" test -d "$state/trash/$id.upper" -a -e "$state/settle/$boot.$id"
        tx run -- sh -c 'echo more >more.txt'
        id2=$(last_tx)
        is "$(ls "$state/settle")" "$boot.$id2" "the next commit's sync settles it (and leaves its own)"
        tx run -- true
        ok "then the sweeper removes its layer" test ! -e "$state/trash/$id.upper"
        tx undo "$id2" >/dev/null # the undo steps below undo the CHANGE commit
else
        for t in "leaves its settle entry" "layer stays" "commits nothing" "next commit settles" "sweeper"; do
                skip "settle: $t" "no /proc/sys/kernel/random/boot_id: every commit syncs twice"
        done
        tx run -- sh -c "$CHANGE" >/dev/null 2>&1
fi

# Crash at every step of an undo: recovery keeps the commit whole.
usteps=0 bad=0 missing=0
for k in $(seq 0 60); do
        TXBOX_FAILPOINT=undo:$k "$TXBOX" -C "$WS" undo >/dev/null 2>&1
        rc=$?
        [ $rc -eq 0 ] && break
        [ $rc -eq 137 ] || { echo "# undo failed with status $rc at step $k"; bad=$((bad + 1)); break; }
        usteps=$((usteps + 1))
        [ -f "$WS/README" ] || { echo "# crash at undo step $k: README missing"; missing=$((missing + 1)); }
        tx recover >/dev/null || bad=$((bad + 1))
        h=$(tree_hash "$WS")
        [ "$h" = "$after" ] || { echo "# crash at undo step $k left tree $h"; bad=$((bad + 1)); break; }
done
ok "a crash at each of $usteps undo steps recovers to the committed state" test "$bad" -eq 0 -a "$usteps" -ge 5
is "$missing" 0 "the file undo puts back was in place after every one of them (one exchange)"
is "$(tree_hash "$WS")" "$before" "the uninterrupted undo restored the original"

# SIGKILL at random moments of a 2,000-file transaction: of its run (odd trials) and of the
# commit of the same change kept pending (even trials), so that kills land in every phase.
BIG='for i in $(seq 1 2000); do echo "$i" >"gen$i"; done; echo big >>README; rm -f docs/a.txt'
new_ws
before=$(tree_hash "$WS")
t0=$(date +%s%N)
tx run -- sh -c "$BIG"
t1=$(date +%s%N)
after=$(tree_hash "$WS")
tx undo >/dev/null
run_ms=$(( (t1 - t0) / 1000000 ))
tx run --commit=keep -- sh -c "$BIG" 2>/dev/null
id=$(last_tx)
t0=$(date +%s%N)
tx commit "$id" >/dev/null
t1=$(date +%s%N)
commit_ms=$(( (t1 - t0) / 1000000 ))
tx undo >/dev/null
trials=16
[ -n "${TXBOX_STRESS:-}" ] && trials=200
bad=0 n_before=0 n_after=0
for i in $(seq 1 $trials); do
        if [ $((i % 2)) -eq 1 ]; then
                delay_ms=$(( RANDOM % (run_ms + 20) ))
                "$TXBOX" -C "$WS" run -- sh -c "$BIG" >/dev/null 2>&1 &
        else
                tx run --commit=keep -- sh -c "$BIG" 2>/dev/null
                id=$(last_tx)
                delay_ms=$(( RANDOM % (commit_ms + 10) ))
                "$TXBOX" -C "$WS" commit "$id" >/dev/null 2>&1 &
        fi
        pid=$!
        sleep "$(printf '%d.%03d' $((delay_ms / 1000)) $((delay_ms % 1000)))"
        kill -9 "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
        tx recover >/dev/null || bad=$((bad + 1))
        h=$(tree_hash "$WS")
        if [ "$h" = "$before" ]; then n_before=$((n_before + 1))
        elif [ "$h" = "$after" ]; then n_after=$((n_after + 1)); tx undo >/dev/null || bad=$((bad + 1))
        else echo "# trial $i (kill at ${delay_ms} ms): a mixed tree $h"; bad=$((bad + 1)); break; fi
        if ls "$HOME/.local/state/txbox/"*/active/ 2>/dev/null | grep -q .; then
                echo "# trial $i: an active transaction is left after recover"; bad=$((bad + 1))
        fi
        [ "$(tree_hash "$WS")" = "$before" ] || { echo "# trial $i: cannot get back to the original"; bad=$((bad + 1)); break; }
done
echo "# $trials kills (run ${run_ms} ms, commit ${commit_ms} ms): $n_before recovered to before, $n_after to after"
ok "SIGKILL at random moments: every recovery is whole ($trials trials)" test "$bad" -eq 0
tx run -- sh -c 'echo next >next.txt'
ok "the next transaction runs after the crashes" test -f "$WS/next.txt"

# A one-shot run writes its audit row beside the program (the connection to the log costs a
# millisecond or two); its begin file holds the record.  Killed before the row is written,
# recovery logs the run from it; a row that cannot be written discards the run's changes.
h=$(tree_hash "$WS")
TXBOX_FAILPOINT=log:0 "$TXBOX" -C "$WS" run -- sh -c 'echo unlogged >unlogged.txt; sleep 0.2' >/dev/null 2>&1
is "$?" 137 "killed before the run's row was written"
tx recover >/dev/null
row=$(tx log --json -n 1)
like "$row" '"argv": \["sh", "-c", "echo unlogged >unlogged.txt; sleep 0.2"\]' "recovery logs the run from its begin file"
like "$row" '"outcome": "rolled_back".*"message": "the txbox process running it died before logging it' "as rolled back, saying why"
is "$(tree_hash "$WS")" "$h" "and nothing of it is applied"
err=$(TXBOX_FAILPOINT=log:0:enospc "$TXBOX" -C "$WS" run -- sh -c 'echo x >unlogged2.txt' 2>&1)
is "$?" 125 "a row that cannot be written: exit 125"
like "$err" 'audit row could not be written; its changes are discarded' "with the reason"
is "$(tree_hash "$WS")" "$h" "and the changes discarded"
like "$(tx log --json -n 1)" '"argv": \["sh", "-c", "echo x >unlogged2.txt"\].*"outcome": "rolled_back"' "the log has it, rolled back, once it could write again"

done_testing
