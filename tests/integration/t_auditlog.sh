#!/bin/bash
# The audit log cannot silently shrink: state/seq and the transactions' directories say which
# commits there were, so a log that lost rows (its -wal deleted, audit.db truncated or
# deleted) is rebuilt from the state dir at its first use, and txbox undo works again; an
# audit.db (or -wal, -shm) that is no regular file is refused at once, never waited on; and
# txbox recover settles every "running" row that no live process owns.
. "$(dirname "$0")/lib.sh"

S="$T/state"
DB="$S/audit.db"
txs() { timeout 20 "$TXBOX" -C "$WS" --state "$S" "$@"; }
fresh() { new_ws; chmod -R u+rwX "$S" 2>/dev/null; rm -rf "$S"; }
ids() { txs log --json | grep -o '"tx": "[^"]*"' | cut -d'"' -f4 | LC_ALL=C sort | tr '\n' ' '; }
# Three commits that change files, one that changes nothing, one more that changes a file.
commits() {
        fresh
        txs run -- sh -c 'echo one > f1' >/dev/null
        txs run -- sh -c 'echo two > f2' >/dev/null
        txs run -- sh -c 'echo three >> README' >/dev/null
        txs run -- true >/dev/null
        txs run -- sh -c 'echo four > f4' >/dev/null
        before_ids=$(ids)
        h3=$(tree_hash "$WS") # after the last commit
}
# After damage: the log lists the commits again, and undo puts the last one back.
check_repaired() { # check_repaired WHAT
        local out
        out=$(txs log 2>&1)
        like "$out" "echo four > f4" "$1: txbox log lists the newest commit again"
        like "$out" "echo one > f1" "$1: and the oldest"
        out=$(txs log --json 2>/dev/null | grep -o '"outcome": "committed"' | wc -l)
        [ "$out" -ge 4 ] && r=0 || r=1
        is "$r" 0 "$1: at least the 4 commits that changed files are committed rows ($out)"
        out=$(txs undo 2>&1)
        like "$out" "^undid tx" "$1: txbox undo works after the repair"
        [ ! -e "$WS/f4" ] && r=0 || r=1
        is "$r" 0 "$1: and put the last commit back (f4 is gone)"
        out=$(txs undo 2>&1)
        like "$out" "^undid tx" "$1: a second undo takes the commit before it"
        is "$(tail -n 1 "$WS/README")" "hello" "$1: README is as before commit 3"
}

# ---- (a) the -wal deleted: the log loses what was not checkpointed ----
commits
[ -e "$DB-wal" ] && r=0 || r=1
is "$r" 0 "(a) the log has a -wal file"
rm -f "$DB-wal"
out=$(txs log 2>&1)
like "$out" "echo four > f4" "(a) after rm audit.db-wal the newest commit is still listed"
check_repaired "(a) deleted -wal"

# ---- (b) audit.db truncated to 0 (its -wal gone with it) ----
commits
: >"$DB"; rm -f "$DB-wal" "$DB-shm"
out=$(txs log 2>&1)
like "$out" "had lost the rows of commits up to #5" "(b) the first use after truncation says so"
check_repaired "(b) truncated audit.db"
like "$(txs log 2>&1)" "\(lost\)" "(b) a placeholder row stands for the no-op commit nothing was left of"

# ---- (b2) truncated while its -wal stays ----
commits
: >"$DB"
out=$(txs log 2>&1); rc=$?
if [ "$rc" -eq 0 ]; then
        like "$out" "echo four > f4" "(b2) truncated with its -wal left: the log is rebuilt"
else
        like "$out" "move it aside" "(b2) truncated with its -wal left: refused, saying what to do"
        mv "$DB" "$DB.bad"; mv "$DB-wal" "$DB-wal.bad" 2>/dev/null; rm -f "$DB-shm"
fi
check_repaired "(b2) truncated audit.db, -wal left"

# ---- (c) audit.db deleted (its -wal and -shm left behind) ----
commits
rm -f "$DB"
check_repaired "(c) deleted audit.db"
[ -n "$(ls "$S" | grep 'audit.db-wal.orphan-')" ] || [ ! -e "$DB-wal.orphan" ] && r=0 || r=1
is "$r" 0 "(c) the orphaned -wal was set aside, not replayed into the new log"

# ---- (d) audit.db a FIFO: every verb fails at once ----
commits
mv "$DB" "$DB.real"; rm -f "$DB-wal" "$DB-shm"; mkfifo "$DB"
for verb in "log" "show HEAD" "undo" "recover" "gc" "run -- true" "begin" "commit 0123456789"; do
        t0=$(date +%s)
        # shellcheck disable=SC2086
        out=$(txs $verb 2>&1); rc=$?
        t1=$(date +%s)
        [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [ $((t1 - t0)) -lt 5 ] && r=0 || r=1
        is "$r" 0 "(d) txbox $verb fails at once on a FIFO audit.db (rc $rc)"
        like "$out" "is a FIFO, not a regular file.*move it aside" "(d) txbox $verb says what and what to do"
done
rm -f "$DB"; mv "$DB.real" "$DB"
quiet_log() { txs log >/dev/null 2>&1; }
ok "(d) with the file back, txbox log works" quiet_log
rm -f "$DB-wal"; mkfifo "$DB-wal"
out=$(txs log 2>&1); rc=$?
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && r=0 || r=1
is "$r" 0 "(d) a FIFO audit.db-wal is refused too (rc $rc)"
like "$out" "audit.db-wal' is a FIFO" "(d) naming the -wal file"
rm -f "$DB-wal"

# ---- (e) audit.db a symlink (to a good log): refused, never followed ----
commits
mv "$DB" "$T/elsewhere.db"; rm -f "$DB-wal" "$DB-shm"; ln -s "$T/elsewhere.db" "$DB"
out=$(txs log 2>&1); rc=$?
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && r=0 || r=1
is "$r" 0 "(e) a symlink audit.db is refused (rc $rc)"
like "$out" "is a symlink, not a regular file" "(e) saying it is a symlink"
out=$(txs run -- sh -c 'echo x > fx' 2>&1); rc=$?
[ "$rc" -ne 0 ] && [ ! -e "$WS/fx" ] && r=0 || r=1
is "$r" 0 "(e) txbox run refuses before running anything"
rm -f "$DB"
check_repaired "(e) symlink removed"

# ---- a healthy log after txbox gc: no false alarm; then a lost log counts the pruned ----
commits
out=$(txs gc --keep=2 2>&1)
like "$out" "pruned undo data of 2 transactions" "gc prunes the undo data of the 2 oldest commits"
out=$(txs run -- sh -c 'echo five > f5' 2>&1 >/dev/null)
is "$out" "" "a run after gc says nothing about a lost log"
out=$(txs log 2>&1 >/dev/null)
is "$out" "" "nor does txbox log"
rm -f "$DB" "$DB-wal" "$DB-shm"
out=$(txs log 2>&1)
like "$out" "echo five > f5" "after rm audit.db the kept commits are back"
like "$out" "\(lost\)" "and one (lost) row stands for those gc pruned and the no-op commit"
like "$(txs log --json)" "3 of commits #1 to #6" "which says how many: 2 pruned, 1 no-op"
out=$(txs undo 2>&1)
like "$out" "^undid tx" "undo works on the rebuilt log"
[ ! -e "$WS/f5" ] && r=0 || r=1
is "$r" 0 "and takes back the newest commit"

# ---- (f) "running" rows nobody owns: recover settles them ----
fresh
txs run -- sh -c 'echo one > f1' >/dev/null
# A run killed mid-command: its txbox process dies, leaving active/ID, its row "running".
bash -c 'timeout 60 "$0" -C "$1" --state "$2" run -- sh -c "echo started > started; sleep 30"; exit 0' \
        "$TXBOX" "$WS" "$S" >/dev/null 2>&1 &
tpid=$!
for _ in $(seq 1 100); do
        [ -n "$(txs log --json 2>/dev/null | grep -o '"outcome": "running"')" ] && break
        sleep 0.1
done
# The oldest process whose command line starts so is txbox (its sandbox helpers come later).
kill -KILL "$(pgrep -o -f -- "^$TXBOX -C $WS --state $S run -- sh -c echo started")"
wait "$tpid"
like "$(txs log --json 2>/dev/null)" '"outcome": "running"' "(f) a killed run leaves a running row"
out=$(txs recover 2>&1)
like "$out" "recovered: 1 rolled back" "(f) txbox recover settles it: $out"
# A run whose last row could not be written (a full disk: a no-op run writes its row, then
# its end, and that second write fails): the row stays "running", its claim goes with the
# process, and only txbox recover settles it.
out=$(TXBOX=$TXBOX_HOOKS TXBOX_FAILPOINT=audit:1:full txs run -- true 2>&1)
like "$out" "No space left on device" "(f) a run that cannot write its last row fails: $out"
[ -z "$(ls "$S/active")" ] && r=0 || r=1
is "$r" 0 "(f) and leaves no claim behind"
like "$(txs log --json 2>/dev/null)" '"outcome": "running"' "(f) but a running row"
out=$(txs recover 2>&1)
like "$out" "recovered: 1 rolled back" "(f) txbox recover settles the row nobody owns: $out"
# The same for a commit whose "committed" row could not be written: completed from its marker.
out=$(TXBOX=$TXBOX_HOOKS TXBOX_FAILPOINT=audit:2:full txs run -- sh -c 'echo x > fx' 2>&1)
like "$out" "No space left on device" "(f) a commit that cannot write its last row fails: $out"
like "$(txs log --json 2>/dev/null)" '"outcome": "committing"' "(f) leaving a committing row"
out=$(txs recover 2>&1)
like "$out" "recovered: 0 rolled back, 1 completed" "(f) txbox recover completes it: $out"
like "$(txs log -n 1)" " committed .*echo x > fx" "(f) the row says committed"
out=$(txs undo 2>&1)
like "$out" "^undid tx" "(f) and the commit can be undone: $out"
[ ! -e "$WS/fx" ] && r=0 || r=1
is "$r" 0 "(f) fx is gone again"
case "$(txs log --json 2>/dev/null)" in *'"outcome": "running"'*) r=1 ;; *) r=0 ;; esac
is "$r" 0 "(f) no running row is left"
out=$(txs recover 2>&1)
like "$out" "recovered: 0 rolled back, 0 completed" "(f) a second recover has nothing to do"
# Names that are not UTF-8 come back exactly from show --json and log --json: the readable
# string has U+FFFD, and the bytes are beside it in hex (docs/CONTRACT.md).
new_ws
tx run -- python3 -c 'import os; open(b"caf\xe9-\xff.txt", "w").write("x"); os.remove("docs/b.txt")' >/dev/null 2>&1
is "$?" 0 "a file with a name that is not UTF-8 is committed"
check_names() { python3 -c '
import json, os, sys
rec = json.loads(sys.stdin.read())
rec = rec[0] if isinstance(rec, list) else rec
added, hexes = rec["changes"]["added"], rec.get("changes_hex", {}).get("added", [])
want = b"caf\xe9-\xff.txt"
exact = [bytes.fromhex(h) if h else a.encode() for a, h in zip(added, hexes or [None] * len(added))]
ok = want in exact and os.path.exists(os.path.join(sys.argv[1].encode(), want))
ok = ok and "\ufffd" in added[exact.index(want)] and "changes_hex" in rec and "deleted" not in rec["changes_hex"]
print("yes" if ok else "no: %r" % rec)' "$WS"; }
is "$(tx show --json "$(last_tx)" | check_names)" yes "show --json gives the exact name in changes_hex, the readable one in changes"
is "$(tx log --json -n 1 | check_names)" yes "... and so does log --json"
done_testing
