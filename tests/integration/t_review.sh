#!/bin/bash
# What review shows (issue 31): a pending session's net change of all its savepoints in
# diff, show and log; its commands and its own exit status in the log; txbox diff of an old
# transaction shows what that transaction changed, not what came later; --stat, path
# filters, --since; show and diff without an id take the newest.
. "$(dirname "$0")/lib.sh"

new_ws
cd "$WS" || exit 1
printf 'zero\n' >f.txt

# ---- a session, command by command ----
S=$(tx begin)
tx run --tx "$S" -- sh -c 'echo one >> f.txt'
d=$(tx diff "$S")
is "$d" "--- a/f.txt
+++ b/f.txt
@@ -1 +1,2 @@
 zero
+one" "an appended file shows as appended, not emptied"
tx run --tx "$S" -- sh -c 'echo two >> g.txt; echo again >> f.txt'
d=$(tx diff "$S")
like "$d" '\+one' "after a second command the diff still has the first one's line"
like "$d" '\+again' "and the second one's"
like "$d" '\+\+\+ b/g.txt' "and the second one's new file"
rec=$(tx show --json "$S")
like "$rec" '"modified": \["f.txt"\]' "show lists the first command's file"
like "$rec" '"added": \["g.txt"\]' "and the second one's"
like "$(tx show "$S")" 'savepoint 1  kept .*sh -c echo one >> f.txt' "show lists each command"
row=$(tx log -n 1)
like "$row" 'session: sh -c echo one >> f.txt; sh -c echo two' "the log row says what ran, not txbox begin"
like "$row" 'pending +0 +\+1 ~1 -0' "and counts the net change of both"

tx run --tx "$S" -- sh -c 'echo three > h.txt; exit 1' 2>/dev/null
is "$?" 1 "a failing command returns its status"
tx run --tx "$S" -- sh -c 'rm g.txt'
rec=$(tx show --json "$S")
like "$rec" '"changes": \{"added": \[\], "modified": \["f.txt"\], "deleted": \[\]\}' \
        "a file made then removed within the session is no net change"
like "$rec" '"exit_code": 0' "the session's exit is 0 after a failed command (its own is in its entry)"
like "$rec" '"savepoints": \[\{"n": 1, "command": \["sh", "-c", "echo one >> f.txt"\], "result": "kept", "exit": 0' \
        "show --json lists the commands"
like "$rec" '"n": 3, "command": \["sh", "-c", "echo three > h.txt; exit 1"\], "result": "dropped", "exit": 1' \
        "a dropped command with its status"
is "$(printf '%s' "$rec" | grep -o '"outcome": "[a-z_]*"')" '"outcome": "pending"' \
        "one outcome key in the record (the commands' have their own keys)"
like "$(tx log -n 1)" 'pending +0 .*session \(\+1 not kept\): sh -c echo one' "the log row counts the command not kept"

ok "rollback --to 2 drops the rm" tx rollback "$S" --to 2
rec=$(tx show --json "$S")
like "$rec" '"added": \["g.txt"\]' "the net change has g.txt again"
like "$rec" '"n": 3, "command": \["sh", "-c", "rm g.txt"\], "result": "rolled_back"' "and the rm says rolled back"
is "$(tx diff --stat "$S")" " f.txt | 2 ++
 g.txt | 1 +
 2 files changed, 3 insertions(+)" "diff --stat of the session"
ok "commit" tx commit "$S"
is "$(cat f.txt g.txt)" "zero
one
again
two" "the commit applied what the review showed"
row=$(tx log -n 1)
like "$row" "^$S  .* committed +0 " "the committed session's row exits 0"

# ---- an old transaction's diff is its own ----
tx run -- sh -c 'echo later >> f.txt'
later=$(last_tx)
echo hand >>f.txt
d=$(tx diff "$S" -- f.txt)
is "$d" "--- a/f.txt
+++ b/f.txt
@@ -1 +1,3 @@
 zero
+one
+again" "the session's diff has neither the later command's line nor the hand edit's"
tx run -- sh -c 'echo last > f.txt'
d=$(tx diff "$later" 2>"$T/err")
like "$d" '^--- a/f.txt.* again
\+later
\+hand$' "a transaction replaced since: its version, from the later one's undo data"
like "$(cat "$T/err")" '^txbox: note: f.txt: changed in place outside txbox after tx [0-9a-f]+; shown as tx [0-9a-f]+ has it$' \
        "with the hand edit made in place since, which it says"
echo inplace >>g.txt
tx run -- sh -c 'rm g.txt'
err=$(tx diff "$S" -- g.txt 2>&1 >/dev/null)
like "$err" 'txbox: note: g.txt: changed in place outside txbox after tx' "a version edited in place says so"
d=$(tx diff "$S" -- g.txt 2>/dev/null)
like "$d" '\+two' "and still shows it"
is "$(tx diff "$S" -- nothere)" "" "a path filter that names nothing: no diff"

# ---- --since, and paths from a subdirectory ----
d=$(tx diff --since "$S")
like "$d" '^--- a/f.txt' "--since: f.txt"
like "$d" '\+last' "as it is now"
is "$(printf '%s' "$d" | grep -c 'g\.txt')" 0 "g.txt, made and deleted since: no change"
mkdir -p sub
d=$(cd sub && tx diff --stat --since "$S" -- ../f.txt)
is "$d" " f.txt | 2 +-
 1 file changed, 1 insertion(+), 1 deletion(-)" "--since --stat, a path relative to a subdirectory"
err=$(tx diff "$S" -- /etc/passwd 2>&1)
is "$?" 2 "a path outside the workspace is bad usage"
like "$err" "outside the workspace" "and says so"

# ---- defaults ----
like "$(tx show)" "^tx        $(last_tx)" "show without an id: the newest"
tx run -- true
is "$(tx diff)" "$(tx diff "$(tx log --json | grep -o '"tx": "[0-9a-f]*"' | sed -n 2p | cut -d'"' -f4)")" \
        "diff without an id: the newest that changed something (not a no-op)"

# ---- the net change listed while pending is what the commit applies ----
mkdir -p tree/a/b tree/c && echo 1 >tree/a/b/x && echo 2 >tree/a/y && echo 3 >tree/c/z && echo 4 >tree/keep &&
        ln -s keep tree/ln && chmod 755 tree/c
S4=$(tx begin)
for step in 'rm -rf tree/a && mkdir -p tree/a && echo new >tree/a/n' \
        'echo changed >tree/keep && mkdir tree/d && echo d >tree/d/f' \
        'echo 4 >tree/keep && rm -rf tree/d' \
        'chmod 700 tree/c && rm tree/c/z && ln -sfn a tree/ln' \
        'rm tree/a/n && mkdir tree/a/n && echo deep >tree/a/n/deep' \
        'rm -rf tree/c && echo file >tree/c'; do
        tx run --tx "$S4" -- sh -c "$step" || echo "# step failed: $step"
done
pending=$(tx show --json "$S4" | grep -o '"changes": {[^}]*}')
tx commit "$S4" >/dev/null
is "$(tx show --json "$S4" | grep -o '"changes": {[^}]*}')" "$pending" \
        "six commands (a directory replaced, a file changed and changed back, a mode, a link, a file made a directory, a directory a file): listed before the commit as the commit applied them"

# ---- a crash after a command's savepoint was kept, before its row: recovery lists its change ----
S3=$(tx begin)
tx run --tx "$S3" -- sh -c 'echo c1 > c1.txt'
TXBOX_FAILPOINT=savepoint:2 "$TXBOX_HOOKS" -C "$WS" run --tx "$S3" -- sh -c 'echo c2 > c2.txt' >/dev/null 2>&1
is "$?" 137 "a crash just past the rename that keeps the second command's savepoint"
tx recover >/dev/null
rec=$(tx show --json "$S3")
like "$rec" '"added": \["c1.txt", "c2.txt"\]' "recovery writes the session's net change with it"
like "$rec" '"message": "session with 2 savepoints' "and its message"
tx rollback "$S3" >/dev/null

# ---- a log made before the savepoint table ----
db=$(ls -d "$HOME"/.local/state/txbox/*/audit.db)
if command -v sqlite3 >/dev/null; then
        sqlite3 "$db" 'DROP TABLE savepoint'
        ok "a log without the table lists" tx log
        S2=$(tx begin)
        tx run --tx "$S2" -- sh -c 'echo x > x.txt'
        like "$(tx show --json "$S2")" '"savepoints": \[\{"n": 1' "its first session makes the table"
        tx rollback "$S2" >/dev/null
else
        skip "a log without the table lists" "no sqlite3"
        skip "its first session makes the table" "no sqlite3"
fi

done_testing
