#!/bin/bash
# Many agents on one workspace: disjoint transactions all commit in parallel; read-modify-write
# of one shared file with retry on 122 loses no update (first committer wins).
. "$(dirname "$0")/lib.sh"

new_ws
AGENTS=8 PER=10
[ -n "${TXBOX_STRESS:-}" ] && PER=50

agent_disjoint() { # agent id: PER transactions, each adding its own file
        local a=$1 i
        for i in $(seq 1 $PER); do
                "$TXBOX" -C "$WS" run -- sh -c "echo $a-$i >a$a-$i.txt" 2>>"$T/failures.err" || echo "agent $a tx $i failed: $?" >>"$T/failures"
        done
}
t0=$(date +%s%N)
for a in $(seq 1 $AGENTS); do agent_disjoint "$a" & done
wait
t1=$(date +%s%N)
par_ms=$(( (t1 - t0) / 1000000 ))
is "$(ls "$WS"/a*-*.txt | wc -l)" $((AGENTS * PER)) "$AGENTS agents x $PER disjoint transactions: every file committed"
ok "no disjoint transaction failed" test ! -s "$T/failures"
[ -s "$T/failures" ] && sort "$T/failures.err" | uniq -c | sort -rn | head -5 | sed "s/^/# /"
t0=$(date +%s%N)
for i in $(seq 1 $PER); do "$TXBOX" -C "$WS" run -- sh -c "echo s >serial$i.txt"; done
t1=$(date +%s%N)
ser_ms=$(( (t1 - t0) * AGENTS / 1000000 ))
echo "# $((AGENTS * PER)) transactions in parallel: $par_ms ms; the same number one after another: about $ser_ms ms"

# Read-modify-write increments of one shared counter, retried on 122.
echo 0 >"$WS/counter"
INC_AGENTS=4
conflicts=0
agent_incr() {
        local a=$1 i rc tries
        for i in $(seq 1 $PER); do
                tries=0
                while :; do
                        "$TXBOX" -C "$WS" run -- sh -c 'n=$(cat counter); sleep 0.0$((RANDOM % 5)); echo $((n + 1)) >counter' 2>>"$T/incr-$a.err"
                        rc=$?
                        [ $rc -eq 0 ] && break
                        tries=$((tries + 1))
                        if [ $rc -ne 122 ] || [ $tries -gt 200 ]; then echo "agent $a: status $rc" >>"$T/incr-fail"; break; fi
                done
        done
}
# Meanwhile a reader looks at the counter: a commit replaces it by one exchange, so the
# name never goes missing (two renames left a window of some microseconds).
reader() {
        local miss=0 looks=0
        while [ ! -e "$T/incr-done" ]; do
                [ -e "$WS/counter" ] || miss=$((miss + 1))
                looks=$((looks + 1))
        done
        echo "$miss $looks" >"$T/reader"
}
reader &
rpid=$!
pids=()
for a in $(seq 1 $INC_AGENTS); do agent_incr "$a" & pids+=($!); done
wait "${pids[@]}"
touch "$T/incr-done"
wait "$rpid"
read -r miss looks <"$T/reader"
is "$miss" 0 "a reader outside never found the counter missing while it was replaced ($looks looks)"
is "$(cat "$WS/counter")" $((INC_AGENTS * PER)) "$INC_AGENTS agents x $PER increments with retry on 122: no lost update"
ok "no increment failed other than by conflict" test ! -s "$T/incr-fail"
n122=$(cat "$T"/incr-*.err 2>/dev/null | grep -c 'conflict: counter')
echo "# $n122 conflicts (exit 122) were retried"
ok "conflicts happened and were named (counter)" test "$n122" -gt 0

# A change made outside txbox after a transaction began also wins over it.
"$TXBOX" -C "$WS" run --commit=keep -- sh -c 'echo mine >shared.txt' 2>/dev/null
id=$(last_tx)
echo theirs >"$WS/shared.txt"
err=$(tx commit "$id" 2>&1)
is "$?" 122 "a pending tx whose path was changed outside txbox: 122 on commit"
like "$err" "conflict: shared.txt \(changed since tx $id began\)" "the conflict names the path"
is "$(cat "$WS/shared.txt")" "theirs" "the outside change is kept"

# A change made just before a transaction begins is not one made after it.  Since Linux 6.13
# a file's ctime may be finer than, and ahead of, the coarse clock; stat asks for such a
# stamp (as the conflict check itself does), and the change then comes right before begin.
fails=0
for i in $(seq 1 30); do
        stat "$WS/before.txt" >/dev/null 2>&1
        echo "$i" >"$WS/before.txt"
        "$TXBOX" -C "$WS" run -- sh -c 'echo in >>before.txt' 2>>"$T/before.err" || fails=$((fails + 1))
done
is "$fails" 0 "30 changes made right before a tx began: none taken for a conflict"
[ -s "$T/before.err" ] && head -3 "$T/before.err" | sed "s/^/# /"

# Changes made while a command runs, by a program outside txbox or by another transaction,
# still win over it (122), however soon after the transaction's own begin they come: even
# in its first clock tick, which is also the tick its own previous commit may have left.
# The command marks in its layer when it has written; the outside change follows at once.
S="$T/race-state"
shopt -s nullglob
wait_for() { # GLOB: busy-waits (no fork) until a path matches, for up to 10 s
        local m end=$((SECONDS + 10))
        while [ $SECONDS -lt $end ]; do m=($1); [ ${#m[@]} -gt 0 ] && return 0; done
        return 1
}
race() { # KIND MARK: a transaction appending to race.txt, changed by KIND once MARK exists
        chmod -R u+rwX "$S" 2>/dev/null # (the overlay's work/work is mode 000)
        rm -rf "$S"
        printf 'base\n' >"$WS/race.txt"
        printf 'new inode\n' >"$WS/race.new"
        "$TXBOX" -C "$WS" --state "$S" run -- sh -c 'echo mine >>race.txt; : >ready; sleep 1' \
                2>"$T/race.err" &
        local pid=$!
        wait_for "$S/tx/*/$2" || echo "# $2 never appeared"
        case $1 in
        write) echo theirs >>"$WS/race.txt" ;;
        chmod) chmod 600 "$WS/race.txt" ;;
        rename) mv "$WS/race.new" "$WS/race.txt" ;;
        delete) rm "$WS/race.txt" ;;
        commit) "$TXBOX" -C "$WS" --state "$S" run -- sh -c 'echo other >>race.txt' ;;
        esac
        wait "$pid"
}
race write begin
is "$?" 122 "an outside write right after a transaction began (its begin file): 122"
like "$(cat "$T/race.err")" "conflict: race.txt \(changed since tx [0-9a-f]+ began\)" "... naming the path"
is "$(cat "$WS/race.txt")" "$(printf 'base\ntheirs')" "... and the outside write is kept"
race write upper/ready
is "$?" 122 "an outside write while the command runs: 122"
race chmod upper/ready
is "$?" 122 "an outside chmod while the command runs: 122"
is "$(stat -c %a "$WS/race.txt")" 600 "... and the mode it set is kept"
race rename upper/ready
is "$?" 122 "an outside rename of an older file over the path (a new inode) while the command runs: 122"
is "$(cat "$WS/race.txt")" "new inode" "... and the file it put there is kept"
race delete upper/ready
is "$?" 122 "an outside delete while the command runs: 122"
ok "... and the file stays deleted" test ! -e "$WS/race.txt"
race commit upper/ready
is "$?" 122 "another transaction committing the same path while the command runs: 122"
like "$(cat "$T/race.err")" "conflict: race.txt \(tx [0-9a-f]+\)" "... naming the path and the transaction"
is "$(cat "$WS/race.txt")" "$(printf 'base\nother')" "... and the other transaction's change is kept"
race commit begin
is "$?" 122 "another transaction committing the same path right after the first began: 122"
race none upper/ready
is "$?" 0 "with no other change the same command commits"
shopt -u nullglob
# A path a transaction creates from a copied-up entry (mv, ln) is not one deleted since
# begin, though its directory changed meanwhile.
tx run --commit=keep -- sh -c 'mv README README2; ln docs/a.txt docs/a2.txt' 2>/dev/null
id=$(last_tx)
echo other >"$WS/other.txt" && echo other >"$WS/docs/other.txt"
ok "mv and ln of files whose directories changed since begin: committed" tx commit "$id"
ok "... README2 and docs/a2.txt are there" test -e "$WS/README2" -a -e "$WS/docs/a2.txt" -a ! -e "$WS/README"

# Undo across concurrency: disjoint later changes do not block undo; overlapping ones do.
tx run -- sh -c 'echo one >u1.txt'
u1=$(last_tx)
tx run -- sh -c 'echo two >u2.txt'
ok "undo of an earlier tx when later ones touched other paths" tx undo "$u1"
ok "its file is gone" test ! -e "$WS/u1.txt"
tx run -- sh -c 'echo three >u3.txt'
u3=$(last_tx)
tx run -- sh -c 'echo four >>u3.txt'
err=$(tx undo "$u3" 2>&1)
is "$?" 1 "undo refused when a later tx touched the same path"
like "$err" "cannot undo tx $u3: later changes touched the same paths: u3.txt \(tx [0-9a-f]+\)" "the refusal names the path and the tx"

done_testing
