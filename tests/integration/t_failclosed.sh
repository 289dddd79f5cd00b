#!/bin/bash
# Fail closed: a judgement that fails (the policy engine crashes, aborts as on out of
# memory, hangs or errors: TXBOX_FAILPOINT=judge:N:ACTION makes the N-th decision of a
# process do so) ends in "no" on every face, and the process that judged survives to say
# so: txbox check exits 1, a hook blocks in each agent's protocol, txbox mcp answers with a
# refusal and keeps serving, and a transaction whose exec check fails is rolled back with
# its audit row settled.  Also the crash of issue 17 itself (an option that takes a value,
# last on the line) on every face.  Destructive commands target only this test's tree.
. "$(dirname "$0")/lib.sh"
TXBOX=$TXBOX_HOOKS # this suite drives failpoints: the test variant (lib.sh)

new_ws
orig=$(tree_hash "$WS")
export TXBOX_JUDGE_TIMEOUT_MS=1500 # the hang cases end sooner than the default 10 s

# ---- txbox check: 1 (refused), never 0 and never a signal's status ----
for action in segv abort hang enospc; do
        out=$(TXBOX_FAILPOINT=judge:0:$action tx check -c 'echo hi' 2>"$T/err")
        is "$?" 1 "check: a judgement that fails ($action) exits 1"
        like "$out" "^deny \(judgement-failed\)" "check: and says deny ($action)"
        like "$(cat "$T/err")" "^txbox: the policy engine failed: .*; refused$" "check: with one txbox: line saying why ($action)"
done
out=$(TXBOX_FAILPOINT=judge:0:segv tx check --json -c 'echo hi' 2>/dev/null)
# (under AddressSanitizer a crashed child exits 1 after its report instead of dying by the signal)
like "$out" '^\{"decision": "deny", "rule": "judgement-failed", "reason": "[^"]+(crashed|exited with status 1)' "check --json: a deny object naming the crash"
out=$(TXBOX_FAILPOINT=judge:0:segv tx check -- ls -la 2>/dev/null)
is "$?" 1 "check -- ARGV: a crash exits 1"
for c in 'sudo -u' 'env -u' 'xargs -I' 'rm -rf / ; sudo -u' 'timeout -s' 'find . -exec' 'git -c'; do
        tx check -c "$c" >/dev/null 2>&1
        rc=$?
        ok "check -c '$c' decides (status $rc: 0 or 1, no crash)" test "$rc" -le 1
done
tx check -c 'rm -rf / ; sudo -u' >/dev/null 2>&1
is "$?" 1 "check: rm -rf / before 'sudo -u' is refused"

# ---- hooks: exit 2 with the reason on stderr (every agent's "block"), nothing on stdout ----
ev() { printf '{"tool_name":"%s","tool_input":{"command":"%s"},"cwd":"%s"}' "$1" "$2" "$WS"; }
for agent in claude-code codex gemini; do
        tool=Bash
        [ "$agent" = gemini ] && tool=run_shell_command
        for action in segv abort hang enospc; do
                out=$(ev "$tool" 'echo hi' | TXBOX_FAILPOINT=judge:0:$action tx hook "$agent" 2>"$T/err")
                rc=$?
                ok "hook $agent: a judgement that fails ($action) blocks (exit $rc, stdout '$out')" \
                        test "$rc" -eq 2 -a -z "$out"
                like "$(cat "$T/err")" "^txbox hook: .*\(blocked: txbox fails closed\)$" "hook $agent: the reason on stderr ($action)"
        done
        out=$(ev "$tool" 'rm -rf / ; sudo -u' | tx hook "$agent" 2>/dev/null)
        is "$?" 0 "hook $agent: 'rm -rf / ; sudo -u' is answered (no crash)"
        like "$out" '"(permissionDecision|decision)":"deny"' "hook $agent: and denied in the agent's JSON"
done
printf 'rules: [\n' >"$T/bad-policy"
ev Bash 'echo hi' | "$TXBOX" -C "$WS" --policy "$T/bad-policy" hook claude-code >/dev/null 2>&1
is "$?" 2 "hook: a bad policy file blocks"
mkdir -p "$WS/.txbox" && printf 'rules:\n  - id: x\n    reason: r\n    program: &p rm\n' >"$WS/.txbox/policy"
ev Bash 'echo hi' | tx hook codex >/dev/null 2>"$T/err"
is "$?" 2 "hook: a policy file with a YAML anchor blocks"
like "$(cat "$T/err")" "line 4: anchors and aliases" "and names the line"
rm -rf "$WS/.txbox"

# ---- txbox mcp: the request gets a refusal, the server keeps answering ----
init='{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}'
check() { printf '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"check_command","arguments":{"command":"%s"}}}\n' "$1" "$2"; }
run() { printf '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"run_command","arguments":{"command":"%s"}}}\n' "$1" "$2"; }
raw=$( {
        echo "$init"
        check 1 'echo hi'
        check 2 'echo hi'
        check 3 'sudo -u'
        check 4 'rm -rf / ; env -u'
        echo '{"jsonrpc":"2.0","id":5,"method":"ping"}'
} | TXBOX_FAILPOINT=judge:0:segv "$TXBOX" -C "$WS" mcp 2>"$T/mcp.err")
is "$?" 0 "mcp: the server ends normally after a crashing judgement"
like "$(printf '%s\n' "$raw" | sed -n 2p)" '"id": *1, "result".*"isError": *true.*"decision": *"deny", *"rule": *"judgement-failed"' \
        "mcp: check_command whose judgement crashed answers deny (judgement-failed)"
like "$(printf '%s\n' "$raw" | sed -n 3p)" '"id": *2, "result".*"decision": *"allow"' "mcp: the next check is judged again (policy reloaded)"
like "$(printf '%s\n' "$raw" | sed -n 4p)" '"id": *3, "result".*"decision"' "mcp: check_command 'sudo -u' is answered"
like "$(printf '%s\n' "$raw" | sed -n 5p)" '"id": *4, "result".*"decision": *"deny", *"rule": *"rm-root"' "mcp: 'rm -rf / ; env -u' is denied"
like "$(printf '%s\n' "$raw" | sed -n 6p)" '"id": *5, *"result": *\{\}' "mcp: and the server still answers a ping"

raw=$( {
        echo "$init"
        run 1 'echo one >one.txt'
        run 2 'echo two >two.txt'
} | TXBOX_FAILPOINT=judge:0:abort "$TXBOX" -C "$WS" mcp 2>>"$T/mcp.err")
like "$(printf '%s\n' "$raw" | sed -n 2p)" '"id": *1, "result".*"outcome": *"denied".*"status": *126' \
        "mcp: run_command whose judgement aborted is refused before it runs (126)"
like "$(printf '%s\n' "$raw" | sed -n 2p)" 'judgement-failed' "mcp: naming judgement-failed"
like "$(printf '%s\n' "$raw" | sed -n 3p)" '"id": *2, "result".*"outcome": *"committed"' "mcp: the next command runs"
ok "mcp: the refused command changed nothing" test ! -e "$WS/one.txt"
ok "mcp: the next one committed" test -e "$WS/two.txt"
rm -f "$WS/two.txt"

# ---- a transaction: its pre-run check, then an exec check that crashes ----
orig=$(tree_hash "$WS")
err=$(TXBOX_FAILPOINT=judge:0:segv tx sh -c 'echo x >x.txt' 2>&1)
is "$?" 126 "sh: a pre-run judgement that crashes refuses the command (126)"
like "$err" "^txbox: denied by rule judgement-failed: .*crashed.*nothing ran$" "sh: one txbox: line names judgement-failed"
is "$(tree_hash "$WS")" "$orig" "sh: nothing changed"
# decision 0 is the pre-run check of the argv, 1 the exec of sh, then the exec of cat; when
# sh is a link to another program (dash), the exec check judges that program too, one more.
n=2
[ "$(basename "$(readlink -f "$(command -v sh)")")" = sh ] || n=3
err=$(TXBOX_FAILPOINT=judge:$n:segv tx run -- sh -c 'echo x >x.txt; cat x.txt; echo y >y.txt' 2>&1)
rc=$?
ok "run: an exec check that crashes does not commit (status $rc)" test "$rc" -ne 0
like "$err" "judgement-failed" "run: the txbox: line names judgement-failed"
is "$(tree_hash "$WS")" "$orig" "run: the transaction's writes were rolled back"
rec=$(tx show --json "$(last_tx)")
like "$rec" '"decision": "deny", "rule": "judgement-failed".*"outcome": "rolled_back"' "run: its audit row is settled: rolled back, judgement-failed"
like "$rec" '"violations": \[\{"rule": "judgement-failed", "path": "cat x.txt"' "run: the refused exec is the violation"
# every later exec of that transaction is refused too (its policy was dropped)
err=$(TXBOX_FAILPOINT=judge:1:segv tx run -- sh -c 'echo a; ls >/dev/null; echo b >b.txt' 2>&1)
ok "run: a crash at the first exec check refuses the program (status $?)" test ! -e "$WS/b.txt"
like "$(tx log --json -n 1)" '"outcome": "(rolled_back|denied)"' "run: and is not left running"
ok "run: the next transaction is judged again" tx sh -c 'echo ok >ok.txt'
ok "run: and commits" test -e "$WS/ok.txt"
rm -f "$WS/ok.txt"

# ---- issue 17 at the exec check: env -u last, and a program named sudo with -u last ----
mkdir -p "$WS/bin" && printf '#!/bin/sh
echo fake sudo "$@"
' >"$WS/bin/sudo" && chmod +x "$WS/bin/sudo"
orig=$(tree_hash "$WS")
for c in 'env -u' './bin/sudo -u' 'xargs -I </dev/null' 'env -P' 'timeout -s'; do
        out=$(tx run -- sh -c "$c; echo survived >survived.txt" 2>&1)
        rc=$?
        ok "run: the exec check judges '$c' (status $rc, not a crash)" test "$rc" -lt 128
        like "$(tx log --json -n 1)" '"outcome": "(committed|rolled_back)"' "run: '$c': its audit row is settled"
        rm -f "$WS/survived.txt"
done

done_testing
