#!/bin/bash
# The audit log as a stream for log shippers: txbox log --json-lines [--since SEQ] [--follow]
# [--cursor FILE].  Every record once in its latest state, oldest change first, each line one
# JSON object with its change number; a record comes again when it changes (pending, then
# committed, later undone); --follow picks up new changes from the live database.
. "$(dirname "$0")/lib.sh"

new_ws
tx run -- sh -c 'echo 1 > one'
tx run -- sh -c 'echo 2 > two'
tx run -- sh -c 'rm -rf ./*' 2>/dev/null
tx run -- sh -c 'echo 3 > three; exit 3' 2>/dev/null
tx run -- sh -c "printf 'x' > \"\$(printf 'odd\\nname')\"; echo" 2>/dev/null
out=$(tx log --json-lines)
is "$(printf '%s\n' "$out" | wc -l)" 5 "five transactions: five lines"
ok "every line is an object that starts with its change number and the tx" \
        sh -c "printf '%s\n' '$(printf '%s' "$out" | sed "s/'/'\\\\''/g")' | grep -vqE '^\{\"seq\": [0-9]+, \"tx\": \"[0-9a-f]+\", .*\}$' && exit 1 || exit 0"
seqs=$(printf '%s\n' "$out" | sed 's/^{"seq": \([0-9]*\),.*/\1/')
is "$(printf '%s\n' "$seqs" | sort -n | tr '\n' ' ')" "$(printf '%s\n' "$seqs" | tr '\n' ' ')" "change numbers increase down the stream"
is "$(printf '%s\n' "$seqs" | sort -u | wc -l)" 5 "no change number twice"
like "$(printf '%s\n' "$out" | sed -n 3p)" '"outcome": "denied"' "the denied command is in the stream"
like "$(printf '%s\n' "$out" | sed -n 4p)" '"outcome": "rolled_back"' "the rolled-back one too"
like "$(printf '%s\n' "$out" | sed -n 5p)" 'odd\\nname' "a name with a newline stays escaped on its line"
last=$(printf '%s\n' "$seqs" | tail -1)

is "$(tx log --json-lines --since "$last")" "" "--since the last number: nothing new"
tx run --commit=keep -- sh -c 'echo p > pend' 2>/dev/null
pid=$(last_tx)
out=$(tx log --json-lines --since "$last")
is "$(printf '%s\n' "$out" | wc -l)" 1 "a pending transaction: one new line"
like "$out" "\"tx\": \"$pid\".*\"outcome\": \"pending\"" "in its pending state"
last2=$(printf '%s' "$out" | sed 's/^{"seq": \([0-9]*\),.*/\1/')
ok "last number grows" test "$last2" -gt "$last"
tx commit "$pid" >/dev/null
tx undo >/dev/null
out=$(tx log --json-lines --since "$last2")
is "$(printf '%s\n' "$out" | wc -l)" 1 "committed then undone since: one line, its latest state"
like "$out" "\"tx\": \"$pid\".*\"outcome\": \"undone\"" "the same transaction, now undone"
is "$(tx log --json-lines | wc -l)" 6 "the whole stream still has one line per transaction"

# --follow and --cursor: a shipper that is restarted resumes where it stopped.
C="$T/cursor"
"$TXBOX" -C "$WS" log --json-lines --follow --cursor "$C" >"$T/follow.out" 2>"$T/follow.err" &
fp=$!
for _ in $(seq 1 50); do [ -s "$C" ] && break; sleep 0.1; done
tx run -- sh -c 'echo f1 > f1'
id1=$(last_tx)
tx run -- sh -c 'echo f2 > f2'
id2=$(last_tx)
for _ in $(seq 1 50); do grep -q "\"tx\": \"$id2\".*\"outcome\": \"committed\"" "$T/follow.out" && break; sleep 0.1; done
kill "$fp"
wait "$fp"
is "$?" 0 "--follow ends with status 0 on SIGTERM"
like "$(cat "$T/follow.out")" "\"tx\": \"$id1\".*\"outcome\": \"committed\"" "--follow printed the first new commit"
like "$(cat "$T/follow.out")" "\"tx\": \"$id2\".*\"outcome\": \"committed\"" "--follow printed the second"
is "$(tail -1 "$T/follow.out" | sed 's/^{"seq": \([0-9]*\),.*/\1/')" "$(cat "$C" | tr -d '\n')" \
        "--cursor holds the last number printed"
is "$(tx log --json-lines --cursor "$C")" "" "restarted with --cursor: nothing printed twice"
tx run -- sh -c 'echo f3 > f3'
like "$(tx log --json-lines --cursor "$C")" "\"outcome\": \"committed\"" "restarted with --cursor: the next change"
is "$(cat "$T/follow.err")" "" "--follow wrote nothing on stderr"

# A log written before the stream existed gets it on first open, in begin order.
if command -v sqlite3 >/dev/null; then
        db=$(ls "$HOME"/.local/state/txbox/*/audit.db)
        sqlite3 "$db" "DROP TRIGGER tx_change_INSERT; DROP TRIGGER tx_change_UPDATE; DROP TABLE tx_change;"
        out=$(tx log --json-lines)
        is "$(printf '%s\n' "$out" | wc -l)" 9 "an older log: every record in the stream after the first open"
        like "$(printf '%s\n' "$out" | head -1)" '^\{"seq": 1, ' "numbered from 1, in begin order"
        tx run -- sh -c 'echo f4 > f4'
        like "$(tx log --json-lines --since 9)" '^\{"seq": 1[0-9], "tx": "[0-9a-f]+", .*"outcome": "committed"' "and new changes follow"
else
        skip "an older log gets the stream" "no sqlite3"
fi

out=$(tx log --json-lines --since abc 2>&1); is "$?" 2 "--since abc: exit 2"
out=$(tx log --follow 2>&1); is "$?" 2 "--follow without --json-lines: exit 2"
like "$out" "go with --json-lines" "and says why"
out=$(tx log --json-lines --json 2>&1); is "$?" 2 "--json-lines with --json: exit 2"

done_testing
