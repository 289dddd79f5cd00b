#!/bin/bash
# Long-lived workspaces: txbox gc prunes undo data beyond the retention (count, age, size),
# oldest first, never what a pending transaction needs, and the same pass runs by itself
# after commits; a crash at any step of gc (failpoints, and kill -9 at random moments)
# leaves every transaction the retention keeps undoable.  A workspace that ran many
# transactions (120 here, 10,000 under make stress) keeps its state dir within the limit.
. "$(dirname "$0")/lib.sh"

S="$T/state"
txs() { "$TXBOX" -C "$WS" --state "$S" "$@"; }
# Transactions whose undo data is in the state dir.
undo_dirs() { find "$S/tx" -mindepth 2 -maxdepth 2 -name committed | wc -l; }
fresh() { new_ws; chmod -R u+rwX "$S" 2>/dev/null; rm -rf "$S"; }
id_of() { txs log --json | grep -o '"tx": "[0-9a-f]*"' | sed -n "${1}p" | cut -d'"' -f4; } # Nth newest

# ---- count, dry run, undo of what stays, undo of what went ----
fresh
declare -a h
for i in $(seq 1 12); do
        txs run -- sh -c "echo $i > f$((i % 3))" || echo "# run $i failed"
        h[$i]=$(tree_hash "$WS")
done
is "$(undo_dirs)" 12 "12 commits keep 12 transactions' undo data"
out=$(txs gc --keep=4 --dry-run)
like "$out" "would prune undo data of 8 transactions" "gc --dry-run says what would go"
is "$(undo_dirs)" 12 "gc --dry-run removes nothing"
out=$(txs gc --keep=4)
like "$out" "pruned undo data of 8 transactions .*; kept 4" "gc --keep=4 prunes the 8 oldest"
is "$(undo_dirs)" 4 "4 transactions' undo data stay"
oldest=$(id_of 12)
for i in 1 2 3 4; do ok "undo of kept transaction $i" txs undo; done
is "$(tree_hash "$WS")" "${h[8]}" "the 4 kept undos put the workspace back as after commit 8"
out=$(txs undo 2>&1); rc=$?
is "$rc" 1 "undo of a pruned transaction fails"
like "$out" "undo data was pruned by txbox gc" "and says it was pruned by gc"
is "$(tree_hash "$WS")" "${h[8]}" "and changes nothing"
out=$(txs diff "$oldest" 2>&1)
like "$out" "no diff for tx $oldest: its undo data was pruned by txbox gc" "diff of a pruned transaction says so"
like "$(txs show "$oldest")" "outcome +committed" "a pruned transaction stays in the log"
out=$(txs gc --keep=0 --dry-run); is "$?" 0 "keep=0 is no count limit"
out=$(txs gc --keep=x 2>&1); is "$?" 2 "gc --keep=x: exit 2"
like "$out" "bad retention item 'keep=x'" "and names the bad item"
out=$(txs gc --save 2>&1); is "$?" 2 "gc --save without a limit: exit 2"

# ---- a pending transaction is never pruned ----
fresh
txs run --commit=keep -- sh -c 'echo p > pending.txt' 2>/dev/null
pid=$(id_of 1)
for i in 1 2 3; do txs run -- sh -c "echo $i > g$i"; done
out=$(txs gc --keep=1 --max-age=1s); rc=$?
is "$rc" 0 "gc with a pending transaction older than every commit"
ok "the pending transaction still commits" txs commit "$pid"
is "$(cat "$WS/pending.txt" 2>/dev/null)" p "with its change"

# ---- saved retention, applied automatically after commits ----
fresh
ok "gc --keep=3 --save" txs gc --keep=3 --save
is "$(txs gc --show)" "keep=3,max-age=30d,max-size=1G" "gc --show prints the saved retention"
is "$(TXBOX_RETENTION=keep=7 "$TXBOX" -C "$WS" --state "$T/other-state" gc --show)" "keep=7,max-age=30d,max-size=1G" \
        "TXBOX_RETENTION applies where nothing is saved"
is "$(TXBOX_RETENTION=keep=7 txs gc --show)" "keep=3,max-age=30d,max-size=1G" "a saved retention wins over TXBOX_RETENTION"
for i in $(seq 1 15); do txs run -- sh -c "echo $i > a$((i % 4))"; done
n=$(undo_dirs)
ok "the automatic pass keeps at most keep+1 transactions' undo data ($n after 15 commits)" test "$n" -le 4
ok "and at least keep" test "$n" -ge 3

# ---- age ----
sleep 2
out=$(txs gc --keep=0 --max-age=1s)
like "$out" "kept 1 " "max-age=1s keeps only the newest commit's undo data"
ok "the newest commit can still be undone" txs undo

# ---- size ----
fresh
head -c 65536 /dev/urandom >"$WS/big"
for i in 1 2 3 4 5 6; do txs run -- sh -c "head -c 65536 /dev/urandom > big"; done
json=$(txs gc --json --keep=0 --max-age=0 --max-size=200K)
kept=$(printf '%s' "$json" | sed -n 's/.*"kept":\([0-9]*\).*/\1/p')
kb=$(printf '%s' "$json" | sed -n 's/.*"kept_bytes":\([0-9]*\).*/\1/p')
ok "max-size=200K: the undo data kept fits ($kb bytes, $kept transactions)" test "$kb" -le 204800
ok "max-size=200K: some were pruned" test "$kept" -lt 6
like "$json" '^\{"retention":"keep=none,max-age=none,max-size=200K","dry_run":false,"kept":[0-9]+,"kept_bytes":[0-9]+,"pruned":[0-9]+,"pruned_bytes":[0-9]+,"leftovers":[0-9]+,"leftover_bytes":[0-9]+,"skipped":[0-9]+\}$' \
        "gc --json: one object"

# ---- the automatic pass takes the sizes state/gc lists; an undo makes it look again ----
# (it measures only directories not listed yet: the pass after every commit must not cost
# in proportion to the thousand commits a workspace keeps by default)
fresh
printf 'small\n' >"$WS/big"
txs gc --keep=0 --max-age=0 --max-size=512K --save >/dev/null
txs run -- sh -c "head -c 1048576 /dev/urandom > big" # A: its undo data is the small original
a=$(id_of 1)
txs run -- sh -c "echo 2 > other" # B: the pass beside it lists A, small
txs run -- sh -c "echo 3 > other" # C
ok "A's undo data is kept (small)" test -d "$S/tx/$a"
head -c 1048576 /dev/urandom >"$S/tx/$a/by-hand" # behind gc's back: no undo did it
txs run -- sh -c "echo 4 > other"
ok "the automatic pass does not measure a listed directory again" test -d "$S/tx/$a"
txs gc >/dev/null
ok "txbox gc measures every directory: A, now 1 MiB, is pruned" test ! -d "$S/tx/$a"
fresh
printf 'small\n' >"$WS/big"
txs gc --keep=0 --max-age=0 --max-size=512K --save >/dev/null
txs run -- sh -c "head -c 1048576 /dev/urandom > big"
a=$(id_of 1)
txs run -- sh -c "echo 2 > other"
txs run -- sh -c "echo 3 > other"
ok "undo of A, an older commit" txs undo "$a" >/dev/null # A now holds the 1 MiB file, for redo
ok "an undo leaves state/gc-stale" test -e "$S/gc-stale"
txs run -- sh -c "echo 4 > other"
ok "the next automatic pass measures A again, over max-size: pruned" test ! -d "$S/tx/$a"
ok "... and removes state/gc-stale" test ! -e "$S/gc-stale"

# ---- a command that changed nothing runs no pass; one that kept undo data, the setting
# saved, or an undo do (the pass beside a command sees the commits before it) ----
fresh
for i in 1 2 3; do txs run -- sh -c "echo $i > f"; done
txs run -- true
txs run -- true
ino=$(stat -c %i "$S/gc")
for i in 1 2 3 4; do txs run -- true; done
is "$(stat -c %i "$S/gc")" "$ino" "4 commands that changed nothing: state/gc not written again"
is "$(grep -c '^[0-9a-f]\{10\} ' "$S/gc")" 3 "... and it lists the 3 commits"
txs run -- sh -c "echo 4 > f"
txs run -- true
ok "a commit that kept undo data: the next pass writes state/gc" test "$(stat -c %i "$S/gc")" != "$ino"
is "$(grep -c '^[0-9a-f]\{10\} ' "$S/gc")" 4 "... listing it"
txs gc --keep=2 --save >/dev/null # saves, then runs its pass under the new setting
ino=$(stat -c %i "$S/gc")
txs run -- true
is "$(stat -c %i "$S/gc")" "$ino" "txbox gc --save ran its pass: the next command runs none"
touch "$S/retention" # as a txbox gc --save killed between its save and its pass leaves it
txs run -- true
ok "the setting saved after the last pass: the next command runs one" test "$(stat -c %i "$S/gc")" != "$ino"
txs run -- sh -c "echo 5 > f"
txs run -- true
txs run -- true
is "$(undo_dirs)" 2 "keep=2 holds across commands that changed nothing"
ok "undo of the newest" txs undo >/dev/null
ino=$(stat -c %i "$S/gc")
txs run -- true
ok "after an undo, the next command runs a pass" test "$(stat -c %i "$S/gc")" != "$ino"
ok "... which removes state/gc-stale" test ! -e "$S/gc-stale"

# ---- a crash at every step of gc ----
# (Each round builds its workspace anew: undo compares inodes, which a copy would change.)
build8() {
        fresh
        for i in $(seq 1 7); do
                txs run -- sh -c "echo $i >> log.txt; echo $i > h$((i % 2))"
                h[$i]=$(tree_hash "$WS")
        done
}
bad=0 steps=0
for n in $(seq 0 60); do
        build8
        TXBOX=$TXBOX_HOOKS TXBOX_FAILPOINT=gc:$n txs gc --keep=3 >/dev/null 2>&1
        rc=$?
        [ "$rc" -eq 0 ] && break
        steps=$((steps + 1))
        if [ "$rc" -ne 137 ]; then echo "# gc:$n exited $rc"; bad=$((bad + 1)); continue; fi
        txs recover >/dev/null || { echo "# gc:$n: recover failed"; bad=$((bad + 1)); }
        # Whatever is left in tx/ is whole: the marker with its journal and undo area.
        for d in "$S"/tx/*/; do
                [ -e "$d/committed" ] && { [ -e "$d/journal" ] && [ -d "$d/undo" ] || { echo "# gc:$n: $d is not whole"; bad=$((bad + 1)); }; }
        done
        for k in 1 2 3; do txs undo >/dev/null 2>&1 || { echo "# gc:$n: undo $k failed"; bad=$((bad + 1)); }; done
        [ "$(tree_hash "$WS")" = "${h[4]}" ] || { echo "# gc:$n: undo did not restore commit 5's tree"; bad=$((bad + 1)); }
        txs gc --keep=3 >/dev/null || { echo "# gc:$n: gc after the crash failed"; bad=$((bad + 1)); }
        # (the newest commit's layers stay until a sync settles it)
        ! ls -A "$S/trash" | grep -qE '[.](gc|orphan)$' || { echo "# gc:$n: pruned data left in the trash"; bad=$((bad + 1)); }
done
ok "gc was killed at each of its $steps steps, then ran to the end" test "$rc" -eq 0 -a "$steps" -ge 6
is "$bad" 0 "after a crash at any step: recover works, what remains is whole, the kept commits undo, gc completes"
is "$(undo_dirs)" 3 "the gc that ran to the end kept 3"

# ---- kill -9 at random moments of a large gc (once: as the user) ----
bad=0 rounds=3
[ "$JAIL_MODE" = root ] && [ -z "${TXBOX_STRESS:-}" ] && rounds=0
for round in $(seq 1 $rounds); do
        fresh
        for i in $(seq 1 20); do txs run -- sh -c "echo $i > k$((i % 5))"; done
        h20=$(tree_hash "$WS")
        txs gc --keep=2 >/dev/null 2>&1 &
        p=$!
        sleep "0.0$((RANDOM % 3))$((RANDOM % 10))"
        kill -9 "$p" 2>/dev/null
        wait "$p" 2>/dev/null
        txs recover >/dev/null || bad=$((bad + 1))
        txs gc --keep=2 >/dev/null || bad=$((bad + 1))
        [ "$(undo_dirs)" -eq 2 ] || { echo "# round $round: $(undo_dirs) undo dirs"; bad=$((bad + 1)); }
        txs undo >/dev/null && txs undo >/dev/null || { echo "# round $round: undo failed"; bad=$((bad + 1)); }
        [ "$(tree_hash "$WS")" != "$h20" ] || bad=$((bad + 1))
        out=$(txs undo 2>&1) && bad=$((bad + 1))
        printf '%s' "$out" | grep -q "pruned by txbox gc" || { echo "# round $round: $out"; bad=$((bad + 1)); }
done
if [ "$rounds" -gt 0 ]; then
        is "$bad" 0 "gc killed at random moments: recover, gc again, the 2 kept undo, the third says pruned"
else
        skip "gc killed at random moments" "run once, as the user"
fi

# ---- many transactions stay within the limit ----
# (as the user only in make check; in both modes under make stress)
N=120
[ "$JAIL_MODE" = root ] && N=40
[ -n "${TXBOX_STRESS:-}" ] && N=10000
fresh
txs gc --keep=20 --max-size=256K --save >/dev/null
for i in $(seq 1 "$N"); do
        txs run -- sh -c "head -c 2000 /dev/urandom > f$((i % 50))" || { echo "# run $i failed"; break; }
done
n=$(undo_dirs)
ok "after $N commits: $n transactions' undo data (keep=20)" test "$n" -le 21
used=$(du -sk --exclude='audit.db*' "$S" 2>/dev/null | cut -f1)
ok "after $N commits: the state dir without the audit log takes ${used} KiB (max-size 256K + 128K of fixed files)" \
        test "$used" -le 384
is "$(txs log --json | grep -o '"outcome": "committed"' | wc -l)" "$N" "the audit log keeps all $N records"
for k in 1 2 3; do ok "undo $k of the newest still works" txs undo; done

done_testing
