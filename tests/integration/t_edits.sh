#!/bin/bash
# The agents' own edit tools as transactions (txbox hook, src/cli/hook_edit.c and
# src/lib/txn/edits.c): the hook's pre-tool event judges and captures, the tool edits (done
# here as each client does it: Claude Code writes a new file and renames it over the name,
# Codex and Gemini CLI write in place), the post-tool event records a committed transaction.
# An edit is in txbox log, txbox undo takes it back, txbox diff shows it, and the undo of a
# command before it is not refused because of it.  Hostile fields of the events, protected
# and outside paths, a capture without its post event, a stale capture, a transaction
# running meanwhile, big and binary files, and a hook killed at each step of its record.
. "$(dirname "$0")/lib.sh"

unset CLAUDE_PROJECT_DIR
json() { python3 -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$1"; }
# event EVENT TOOL INPUT-JSON [CALL-ID [CWD]]: an event as the agents send it
event() {
        printf '{"session_id": "sess-1", "cwd": %s, "hook_event_name": "%s", "tool_name": "%s", "tool_input": %s%s}' \
                "$(json "${5:-$WS}")" "$1" "$2" "$3" "${4:+, \"tool_use_id\": \"$4\"}"
}
hook() { tx hook "$@"; } # hook AGENT < EVENT
edit_in() { printf '%s' "$1" | python3 -c 'import json,sys; print(json.dumps({"file_path": sys.argv[1], "old_string": "a", "new_string": "b"}))' "$2"; }
pathin() { python3 -c 'import json,sys; print(json.dumps({"file_path": sys.argv[1], "content": "x"}))' "$1"; }
ino() { stat -c %i "$1"; }
# What Claude Code's Edit does: a new file renamed over the name.
claude_write() { printf "$2" >"$1.tmp.$$" && chmod --reference="$1" "$1.tmp.$$" 2>/dev/null; mv "$1.tmp.$$" "$1"; }
edits_pending() { find "$HOME/.local/state/txbox" -mindepth 3 -maxdepth 3 -path '*/edits/*' 2>/dev/null | wc -l; }
newest() { tx log --json -n 1 | python3 -c 'import json,sys; r=json.load(sys.stdin)[0]; print(r["outcome"], " ".join(r["argv"]))'; }

# ---- 1. Claude Code's Edit (a new file renamed over the name), after a command that wrote
# the same file: both in the log, undone newest first, each back to what it replaced ----
new_ws
orig=$(tree_hash "$WS")
tx run -- sh -c 'echo line3 >>docs/a.txt' >/dev/null 2>&1
cmd_ino=$(ino "$WS/docs/a.txt")
pre=$(event PreToolUse Edit "$(pathin "$WS/docs/a.txt")" toolu_1 | hook claude-code)
is "$?/$pre" "0/" "claude-code Edit, pre-tool: allowed, no opinion (Claude Code's own rules apply)"
is "$(ino "$WS/docs/a.txt")" "$cmd_ino" "... the capture only read the workspace (the inode is the same)"
claude_write "$WS/docs/a.txt" 'line1\nline2\nline3\nEDITED\n'
post=$(event PostToolUse Edit "$(pathin "$WS/docs/a.txt")" toolu_1 | hook claude-code)
is "$?/$post" "0/" "post-tool: recorded silently"
is "$(newest)" "committed claude-code Edit docs/a.txt" "the edit is a committed transaction in txbox log"
like "$(tx show "$(last_tx)")" 'changes +1\n +~ docs/a.txt|~ docs/a.txt' "txbox show lists the edited file"
like "$(tx diff "$(last_tx)")" '\+EDITED' "txbox diff shows the edit"
like "$(tx log --json -n 1)" '"modified": \["docs/a.txt"\]' "... modified, in the JSON record"
is "$(edits_pending)" 0 "the capture is gone once recorded"
tx undo >/dev/null 2>&1
is "$?/$(cat "$WS/docs/a.txt")" "0/$(printf 'line1\nline2\nline3')" "txbox undo takes the edit back"
is "$(ino "$WS/docs/a.txt")" "$cmd_ino" "... the very inode the command's commit left"
out=$(tx undo 2>&1)
is "$?" 0 "the undo of the command before the edit is not refused ($out)"
is "$(tree_hash "$WS")" "$orig" "... and the workspace is as it was before both"

# ---- 2. Gemini CLI's replace (in place), the same way ----
new_ws
orig=$(tree_hash "$WS")
tx run -- sh -c 'echo line3 >>docs/a.txt' >/dev/null 2>&1
cmd_ino=$(ino "$WS/docs/a.txt")
pre=$(event BeforeTool replace '{"file_path": "docs/a.txt", "old_string": "line3", "new_string": "LINE3"}' | hook gemini)
is "$?/$pre" "0/{}" "gemini replace, before-tool: allowed ({})"
printf 'line1\nline2\nLINE3\n' >"$WS/docs/a.txt" # in place: the same inode
is "$(ino "$WS/docs/a.txt")" "$cmd_ino" "(the tool wrote in place)"
post=$(event AfterTool replace '{"file_path": "docs/a.txt", "old_string": "line3", "new_string": "LINE3"}' | hook gemini)
is "$?/$post" "0/{}" "after-tool: recorded ({})"
is "$(newest)" "committed gemini replace docs/a.txt" "the edit is in the log"
is "$(cat "$WS/docs/a.txt")" "$(printf 'line1\nline2\nLINE3')" "the edited content stays in the workspace"
ok "... under a new inode (the old one, with its old content back, is the undo data)" test "$(ino "$WS/docs/a.txt")" != "$cmd_ino"
tx undo >/dev/null 2>&1
is "$(ino "$WS/docs/a.txt"):$(cat "$WS/docs/a.txt")" "$cmd_ino:$(printf 'line1\nline2\nline3')" "txbox undo puts the inode and content the command left back"
out=$(tx undo 2>&1)
is "$?:$(tree_hash "$WS")" "0:$orig" "the command's undo then works, the workspace as before ($out)"

# ---- 3. An edit, then a command on the same file: undo the command, then the edit ----
new_ws
orig=$(tree_hash "$WS")
event BeforeTool write_file "$(pathin "$WS/docs/b.txt")" | hook gemini >/dev/null
printf 'written\n' >"$WS/docs/b.txt"
event AfterTool write_file "$(pathin "$WS/docs/b.txt")" | hook gemini >/dev/null
tx run -- sh -c 'echo more >>docs/b.txt' >/dev/null 2>&1
tx undo >/dev/null 2>&1
is "$?:$(cat "$WS/docs/b.txt")" "0:written" "the command after an edit is undone"
tx undo >/dev/null 2>&1
is "$?:$(tree_hash "$WS")" "0:$orig" "then the edit: the workspace as before"

# ---- 4. Write of a new file in new directories: undo removes them all ----
new_ws
orig=$(tree_hash "$WS")
event PreToolUse Write "$(pathin "$WS/new/deep/f.txt")" toolu_4 | hook claude-code >/dev/null
mkdir -p "$WS/new/deep" && printf 'x' >"$WS/new/deep/f.txt"
event PostToolUse Write "$(pathin "$WS/new/deep/f.txt")" toolu_4 | hook claude-code >/dev/null
like "$(tx log -n 1)" '\+3 ~0 -0' "a new file in two new directories: three paths added"
tx undo >/dev/null 2>&1
is "$?:$(tree_hash "$WS")" "0:$orig" "txbox undo removes the file and the directories the edit made"

# ---- 5. Codex's apply_patch: update, add, delete, move, in one transaction ----
new_ws
orig=$(tree_hash "$WS")
patch=$(json '*** Begin Patch
*** Update File: docs/a.txt
@@
 line1
-line2
+LINE2
*** Add File: gen/x.txt
+x
*** Delete File: docs/b.txt
*** Update File: src/main.c
*** Move to: src/app.c
@@
-int main(void) { return 0; }
+int main(void) { return 1; }
*** End Patch')
event PreToolUse apply_patch "{\"command\": $patch}" call_5 | hook codex
is "$?" 0 "codex apply_patch, pre-tool: allowed, no output"
printf 'line1\nLINE2\n' >"$WS/docs/a.txt"
mkdir -p "$WS/gen" && echo x >"$WS/gen/x.txt"
rm "$WS/docs/b.txt"
echo 'int main(void) { return 1; }' >"$WS/src/app.c" && rm "$WS/src/main.c"
post=$(event PostToolUse apply_patch "{\"command\": $patch}" call_5 | hook codex)
is "$post" "" "post-tool: recorded, no output"
like "$(tx log -n 1)" '\+3 ~1 -2 .*codex apply_patch docs/a.txt gen/x.txt docs/b.txt' "one transaction: 3 added, 1 modified, 2 deleted"
tx undo >/dev/null 2>&1
is "$?:$(tree_hash "$WS")" "0:$orig" "txbox undo takes the whole patch back"

# ---- 6. A binary file edited in place: its bytes come back exactly ----
new_ws
python3 -c 'import sys; sys.stdout.buffer.write(bytes(range(256)) * 64)' >"$WS/blob.bin"
cp "$WS/blob.bin" "$T/blob.orig"
event BeforeTool write_file "$(pathin blob.bin)" | hook gemini >/dev/null
python3 -c 'import sys; sys.stdout.buffer.write(bytes(range(255, -1, -1)) * 3)' >"$WS/blob.bin"
event AfterTool write_file "$(pathin blob.bin)" | hook gemini >/dev/null
like "$(tx log -n 1)" '~1 .*gemini write_file blob.bin' "a binary file's edit is recorded"
tx undo >/dev/null 2>&1
ok "... and undone byte for byte" cmp -s "$WS/blob.bin" "$T/blob.orig"

# ---- 7. Nothing changed, no pre event, no post event, a failed tool ----
new_ws
n0=$(tx log --json | grep -o '"tx":' | wc -l)
event PreToolUse Write "$(pathin "$WS/README")" toolu_7 | hook claude-code >/dev/null
claude_write "$WS/README" 'hello\n'
event PostToolUse Write "$(pathin "$WS/README")" toolu_7 | hook claude-code >/dev/null
is "$(tx log --json | grep -o '"tx":' | wc -l)" "$n0" "a Write of the same content: nothing to record"
post=$(event PostToolUse Write "$(pathin "$WS/docs/a.txt")" toolu_none | hook claude-code)
like "$post" '^\{"systemMessage": ?"txbox: the Write of docs/a.txt was not recorded \(no undo\): no capture of this edit' \
        "a post-tool event without its pre-tool event: not recorded, and the user is told"
tx run -- sh -c 'echo c >>docs/a.txt' >/dev/null 2>&1
event PreToolUse Edit "$(pathin "$WS/docs/a.txt")" toolu_lost | hook claude-code >/dev/null
is "$(edits_pending)" 1 "a capture waits for its post-tool event"
out=$(tx undo 2>&1)
is "$?" 0 "a capture whose edit never came blocks nothing: the undo of the command goes ($out)"
event PreToolUse Edit "$(pathin "$WS/docs/b.txt")" toolu_fail | hook claude-code >/dev/null
event PostToolUseFailure Edit "$(pathin "$WS/docs/b.txt")" toolu_fail | hook claude-code >/dev/null
is "$(edits_pending)" 1 "Claude Code's PostToolUseFailure drops its capture"

# txbox gc removes a capture whose record never came once it is an hour old (the hooks
# would, but may be gone), and leaves a fresh one.
for c in "$HOME"/.local/state/txbox/*/edits/*; do touch -d '2 hours ago' "$c"; done
like "$(tx gc)" 'removed [1-9][0-9]* leftover' "txbox gc counts an expired capture among the leftovers"
is "$(edits_pending)" 0 "... and removes it"
event PreToolUse Edit "$(pathin "$WS/docs/a.txt")" toolu_fresh | hook claude-code >/dev/null
tx gc >/dev/null
is "$(edits_pending)" 1 "... a fresh one stays"

# ---- 8. A stale capture: a transaction committed the path between pre and post ----
new_ws
event BeforeTool replace '{"file_path": "docs/a.txt", "old_string": "x", "new_string": "y"}' | hook gemini >/dev/null
tx run -- sh -c 'echo by-command >>docs/a.txt' >/dev/null 2>&1
printf 'by-tool\n' >"$WS/docs/a.txt"
post=$(event AfterTool replace '{"file_path": "docs/a.txt", "old_string": "x", "new_string": "y"}' | hook gemini)
like "$post" 'not recorded.*a transaction changed it between the pre- and post-tool events' \
        "a capture older than a commit of its path: not recorded (its original is not what the edit replaced)"
like "$(newest)" '^committed /bin/sh -c|^committed sh -c' "... the log's newest is the command"

# ---- 9. A transaction running while an edit of the same file is recorded: first
# committer wins, the transaction is rolled back (122), the edit stays ----
new_ws
tx run -- sh -c 'sleep 2; echo late >>docs/b.txt' >/dev/null 2>&1 &
bg=$!
sleep 0.5
event BeforeTool write_file "$(pathin docs/b.txt)" | hook gemini >/dev/null
printf 'edited\n' >"$WS/docs/b.txt"
event AfterTool write_file "$(pathin docs/b.txt)" | hook gemini >/dev/null
wait "$bg"
is "$?:$(cat "$WS/docs/b.txt")" "122:edited" "a command that began before the edit and wrote the same file: rolled back (122), the edit kept"

# ---- 10. The policy judges the edits' writes; hostile fields fail closed ----
new_ws
mkdir -p "$WS/.git/hooks" "$WS/.txbox"
echo S=1 >"$WS/.env"
ln -s /etc/passwd "$WS/pw"
ln -s loop2 "$WS/loop1" && ln -s loop1 "$WS/loop2"
deny() { # deny AGENT TOOL PATH DESCRIPTION
        local out
        out=$(event PreToolUse "$2" "$(pathin "$3")" t | hook "$1")
        like "$out" '"permissionDecision": ?"deny"' "$4"
}
deny claude-code Write .git/hooks/pre-commit "an edit of a git hook is refused (git-internals)"
deny claude-code Edit .git/config "an edit of .git/config is refused (its keys can run code)"
deny claude-code Write .txbox/policy "an edit under .txbox/ is refused (effect-protected-path)"
deny claude-code Edit .env "an edit of an existing .env is refused (effect-protected-path)"
deny claude-code Write /etc/motd "an edit of a system file is refused (write-system)"
deny claude-code Write pw "an edit through a symlink to /etc/passwd is judged where it lands"
deny claude-code Write ../../../../../../etc/motd "a relative path that climbs out is judged where it lands"
out=$(event PreToolUse apply_patch "{\"command\": $(json "*** Begin Patch
*** Add File: $HOME/.bashrc
+x
*** End Patch")}" c | hook codex)
like "$out" '"permissionDecision": ?"deny".*persistence' "codex: a patch that adds ~/.bashrc is refused (persistence)"
out=$(event BeforeTool write_file "$(pathin .git/hooks/post-checkout)" | hook gemini)
like "$out" '^\{"decision": ?"deny".*git-internals' "gemini: write_file of a git hook is refused"
blocked() { # blocked AGENT EVENT-JSON DESCRIPTION
        local out rc
        out=$(printf '%s' "$2" | hook "$1" 2>&1)
        rc=$?
        like "$rc: $out" '^2: .*blocked: txbox fails closed' "$3"
}
blocked claude-code "$(event PreToolUse Write '{"file_path": 5}')" "file_path not a string: blocked"
blocked claude-code "$(event PreToolUse Write '{}')" "no file_path: blocked"
blocked claude-code "$(event PreToolUse Write '"x"')" "tool_input not an object: blocked"
blocked claude-code "$(event PreToolUse Write '{"file_path": "a\u0000b"}')" "a NUL in the path: blocked"
blocked claude-code "$(event PreToolUse Write "$(pathin x)" t relative/dir)" "a relative cwd: blocked"
blocked claude-code "$(event PreToolUse Write "$(pathin x)" t /no/such/dir)" "a cwd that does not exist: blocked"
blocked claude-code "$(event PreToolUse Write "$(pathin loop1)")" "a symlink loop: blocked"
blocked claude-code "$(event PreToolUse Write "{\"file_path\": \"$(head -c 5000 /dev/zero | tr '\0' a)\"}")" "a path over PATH_MAX: blocked"
many=$(for i in $(seq 300); do printf '*** Add File: f%d\n+x\n' "$i"; done)
blocked codex "$(event PreToolUse apply_patch "{\"command\": $(json "$many")}" c)" "a patch of 300 files: blocked"
blocked codex "$(event PreToolUse apply_patch '{"command": 7}' c)" "a patch that is no string: blocked"
ok "none of the refused paths was written" test ! -e "$WS/.git/hooks/pre-commit" -a ! -e "$WS/.txbox/policy"
is "$(event Notification Write "$(pathin x)" | hook claude-code)" "" "another event: no opinion"
is "$(printf '{"hook_event_name": 5, "tool_name": "Write", "tool_input": {}}' | hook gemini)" "{}" "an event name that is no string: no opinion"

# A name with a newline and a terminal escape is recorded; messages escape it.
nasty=$(printf 'n\nl\033[31m.txt')
event BeforeTool write_file "$(pathin "$nasty")" | hook gemini >/dev/null
printf 'x' >"$WS/$nasty"
event AfterTool write_file "$(pathin "$nasty")" | hook gemini >/dev/null
like "$(tx log --json -n 1)" '"added": \["n\\nl\\u001[bB]\[31m.txt"\]' "a hostile file name is recorded as it is (JSON-escaped)"
out=$(event AfterTool write_file "$(pathin "$nasty")" | hook gemini)
like "$out" 'write_file of n\\\\nl\\\\x1b\[31m.txt was not recorded' "... and escaped in a message (no capture for it now)"

# An "ask" (a workspace policy's rule): Claude Code asks the user, so the edit is captured
# and, once let through, recorded; Codex and Gemini CLI take it for a deny.
new_ws
mkdir -p "$WS/.txbox"
printf 'version: 1\nrules:\n  - id: ask-docs\n    decision: ask\n    reason: docs are reviewed\n    writes: ["docs/*"]\n' \
        >"$WS/.txbox/policy"
out=$(event PreToolUse Edit "$(pathin "$WS/docs/a.txt")" toolu_ask | hook claude-code)
like "$out" '"permissionDecision":"ask".*ask-docs' "claude-code: a write rule that asks: Claude Code asks the user"
printf 'approved\n' >"$WS/docs/a.txt"
event PostToolUse Edit "$(pathin "$WS/docs/a.txt")" toolu_ask | hook claude-code >/dev/null
is "$(newest)" "committed claude-code Edit docs/a.txt" "... the edit the user let through is recorded"
like "$(event BeforeTool write_file "$(pathin docs/a.txt)" | hook gemini)" '"decision": ?"deny".*needs approval' \
        "gemini: the same ask is a deny (no approval channel)"

# ---- 11. Outside the workspace: judged, allowed where the policy allows, not recorded, and
# the user told so once it is made ----
n0=$(tx log --json | grep -o '"tx":' | wc -l)
pre=$(event PreToolUse Write "$(pathin "$T/outside.txt")" t_out | hook claude-code)
echo x >"$T/outside.txt"
post=$(event PostToolUse Write "$(pathin "$T/outside.txt")" t_out | hook claude-code)
is "$pre|$(tx log --json | grep -o '"tx":' | wc -l)" "|$n0" "an edit outside the workspace (in a temp dir): allowed, not recorded"
like "$post" '^\{"systemMessage": ?"txbox: the Write of .*/outside.txt is outside the workspace .*: not recorded \(no undo\)"\}$' \
        "... and the user is told it has no undo"
post=$(event AfterTool write_file "$(pathin "$T/outside.txt")" | hook gemini)
like "$post" '^\{"systemMessage": ?"txbox: the write_file of .*outside the workspace' "... (gemini: the same, in place of {})"

# ---- 12. Big files: one edited in place over 64 MiB is not recorded (its original was
# not kept), and the user is told ----
new_ws
truncate -s 65M "$WS/big.img"
event BeforeTool write_file "$(pathin big.img)" | hook gemini >/dev/null
printf 'x' >>"$WS/big.img"
post=$(event AfterTool write_file "$(pathin big.img)" | hook gemini)
like "$post" 'not recorded \(no undo\): the original of .big.img. was not kept \(over 64 MiB' "a 65 MiB file written in place: not recorded, and said why"
rm -f "$WS/big.img"

# ---- 13. The hook killed at each step of a record: the workspace keeps the edit, the log
# holds the record whole or not at all, and recovery leaves nothing behind ----
for step in 0 1 2 3; do
        new_ws
        tx run -- sh -c 'echo c >>docs/a.txt' >/dev/null 2>&1
        event BeforeTool replace '{"file_path": "docs/a.txt", "old_string": "c", "new_string": "d"}' | hook gemini >/dev/null
        printf 'line1\nline2\nd\n' >"$WS/docs/a.txt"
        event AfterTool replace '{"file_path": "docs/a.txt", "old_string": "c", "new_string": "d"}' >"$T/ev"
        TXBOX_FAILPOINT="edit:$step" "$TXBOX_HOOKS" -C "$WS" hook gemini <"$T/ev" >/dev/null 2>&1 &
        wait $! 2>/dev/null # (its "Killed" notice, not the test's output)
        killed=$?
        tx recover >/dev/null 2>&1
        content=$(cat "$WS/docs/a.txt")
        rows=$(tx log --json | python3 -c 'import json,sys; print(" ".join(r["outcome"] for r in json.load(sys.stdin)))')
        claims=$(find "$HOME/.local/state/txbox" -path '*/active/*' 2>/dev/null | wc -l)
        is "$killed|$content|$claims" "137|$(printf 'line1\nline2\nd')|0" "killed at step $step of the record: the edit stays, no claim left"
        case $rows in
        "committed committed")
                tx undo >/dev/null 2>&1 && tx undo >/dev/null 2>&1
                is "$?:$(cat "$WS/docs/a.txt")" "0:$(printf 'line1\nline2')" "... recorded whole: both undone (step $step)" ;;
        committed) is "$rows" "committed" "... not recorded at all, nothing half-made (step $step)" ;;
        *) is "$rows" "committed committed | committed" "... the log after recovery (step $step)" ;;
        esac
done

done_testing
