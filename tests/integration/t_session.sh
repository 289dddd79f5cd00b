#!/bin/bash
# Session transactions: several commands, one savepoint each, committed or rolled back at once.
. "$(dirname "$0")/lib.sh"

new_ws
orig=$(tree_hash "$WS")
id=$(tx begin)
like "$id" '^[0-9a-f]{10}$' "begin prints a session id"

tx run --tx "$id" -- sh -c 'echo one >s1.txt && echo more >>README'
is "$?" 0 "savepoint 1 runs"
ok "savepoint 1 is not applied yet" test ! -e "$WS/s1.txt"
is "$(tx run --tx "$id" -- cat s1.txt)" "one" "savepoint 2 sees savepoint 1's changes"
tx run --tx "$id" -- sh -c 'rm s1.txt && mkdir d && echo two >d/s2.txt && rm docs/b.txt'
tx run --tx "$id" -- sh -c 'echo bad >s3.txt; exit 4' 2>/dev/null
is "$?" 4 "a failing command in a session returns its status"
is "$(tx run --tx "$id" -- sh -c 'test -e s3.txt && echo present || echo absent')" "absent" "its savepoint was dropped"
tx run --tx "$id" -- sh -c 'echo three >s4.txt'
ok "rollback --to 3 drops the savepoints above 3" tx rollback "$id" --to 3
is "$(tx run --tx "$id" -- sh -c 'test -e s4.txt && echo present || echo absent')" "absent" "savepoint above 3 is gone"
is "$(tree_hash "$WS")" "$orig" "nothing reached the workspace before commit"
ok "commit applies every savepoint at once" tx commit "$id"
ok "savepoint 3's deletion of s1.txt applied" test ! -e "$WS/s1.txt"
is "$(cat "$WS/d/s2.txt")" "two" "savepoint 3's new file applied"
like "$(cat "$WS/README")" "more" "savepoint 1's edit applied"
ok "deletion applied" test ! -e "$WS/docs/b.txt"
rec=$(tx show --json "$id")
like "$rec" '"outcome": "committed"' "the session is one committed transaction"
ok "undo of the session restores the original tree" tx undo "$id"
is "$(tree_hash "$WS")" "$orig" "the tree is as before the session"

# A session rolled back as a whole; one that outlives its supervisor.
id2=$(tx begin)
tx run --tx "$id2" -- sh -c 'echo x >x.txt'
ok "rollback of a whole session" tx rollback "$id2"
ok "nothing applied" test ! -e "$WS/x.txt"
err=$(tx run --tx "$id2" -- true 2>&1)
is "$?" 125 "a rolled-back session takes no more commands"
like "$err" "is rolled_back, not pending" "and says why"

# A crash while the savepoints are folded for commit: recovery finishes the fold (each
# savepoint is retired once folded), the session stays pending, and its commit applies it all.
id3=$(tx begin)
tx run --tx "$id3" -- sh -c 'echo a >f1.txt'
tx run --tx "$id3" -- sh -c 'echo b >f2.txt'
"$TXBOX" -C "$WS" run -- true >/dev/null
TXBOX_FAILPOINT=fold:2 "$TXBOX_HOOKS" -C "$WS" commit "$id3" >/dev/null 2>&1
is "$?" 137 "crash while folding (failpoint)"
tx recover >/dev/null
is "$(tree_hash "$WS")" "$orig" "after recovery the workspace is untouched"
like "$(tx show --json "$id3")" '"outcome": "pending".*"message": "tx [0-9a-f]* is pending \(a session whose savepoints were folded' \
        "the interrupted session is pending, folded, and says so"
ok "its commit applies both savepoints" tx commit "$id3"
is "$(cat "$WS/f1.txt" "$WS/f2.txt")" "a
b" "both savepoints' files are there"

done_testing
