#!/bin/bash
# Fail closed: a judgement that fails (the policy engine crashes, aborts as on out of
# memory, hangs, is killed or errors: TXBOX_FAILPOINT=judge:N:ACTION makes the N-th decision
# of a process, its judge processes' included, do so) ends in "no" on every face, and the
# process that asked survives to say so: txbox check exits 1, a hook blocks in each agent's
# protocol, txbox mcp answers with a refusal and keeps serving, and a transaction whose exec
# check fails is rolled back with its audit row settled, its next exec judged by a new
# judge.  Also the crash of issue 17 itself (an option that takes a value, last on the line)
# on every face.  Destructive commands target only this test's tree.
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
like "$(printf '%s\n' "$raw" | sed -n 3p)" '"id": *2, "result".*"decision": *"allow"' "mcp: the next check is judged again (by a new judge)"
like "$(printf '%s\n' "$raw" | sed -n 4p)" '"id": *3, "result".*"decision"' "mcp: check_command 'sudo -u' is answered"
like "$(printf '%s\n' "$raw" | sed -n 5p)" '"id": *4, "result".*"decision": *"deny", *"rule": *"rm-root"' "mcp: 'rm -rf / ; env -u' is denied"
like "$(printf '%s\n' "$raw" | sed -n 6p)" '"id": *5, *"result": *\{\}' "mcp: and the server still answers a ping"

# ---- txbox mcp: its judge process killed from outside between two requests: the next
# request is answered by a new judge ----
mkfifo "$T/mcp.in"
"$TXBOX" -C "$WS" mcp <"$T/mcp.in" >"$T/mcp.out" 2>"$T/mcp.err" &
mpid=$!
exec 7>"$T/mcp.in"
lines() { # wait for N lines of answers (at most 20 s)
        for _ in $(seq 200); do [ "$(wc -l <"$T/mcp.out")" -ge "$1" ] && return 0; sleep 0.1; done
        return 1
}
judge_of() { # the judge processes whose parent is pid $1
        for st in /proc/[0-9]*/status; do
                awk -v pp="$1" '/^Name:/ {n = $2} /^PPid:/ {p = $2} END {exit !(n == "txbox-judge" && p == pp)}' \
                        "$st" 2>/dev/null && basename "$(dirname "$st")"
        done
}
{ echo "$init"; check 1 'echo hi'; } >&7
lines 2
j1=$(judge_of "$mpid")
ok "mcp: the server's decisions are made by a judge process of its own ($j1)" test -n "$j1"
kill -KILL "$j1"
for _ in $(seq 200); do # dead (a zombie until the server reaps it), not dying
        grep -q '^State:.*Z' "/proc/$j1/status" 2>/dev/null || ! [ -e "/proc/$j1" ] && break
        sleep 0.1
done
check 2 'echo hi' >&7
lines 3
like "$(sed -n 3p "$T/mcp.out")" '"id": *2, "result".*"decision": *"allow"' "mcp: a judge killed from outside: the next check is answered"
j2=$(judge_of "$mpid")
ok "mcp: by a new judge ($j1, then $j2)" test -n "$j2" -a "$j2" != "$j1"
check 3 'rm -rf /' >&7
lines 4
like "$(sed -n 4p "$T/mcp.out")" '"id": *3, "result".*"decision": *"deny", *"rule": *"rm-root"' "mcp: which refuses as the policy says"
exec 7>&-
wait "$mpid"
is "$?" 0 "mcp: the server ends normally"
is "$(judge_of "$mpid")" "" "mcp: and its judge with it"

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
err=$(TXBOX_FAILPOINT=judge:1:segv tx run -- sh -c 'echo a; ls >/dev/null; echo b >b.txt' 2>&1)
ok "run: a crash at the first exec check refuses the program (status $?)" test ! -e "$WS/b.txt"
like "$(tx log --json -n 1)" '"outcome": "(rolled_back|denied)"' "run: and is not left running"
ok "run: the next transaction is judged again" tx sh -c 'echo ok >ok.txt'
ok "run: and commits" test -e "$WS/ok.txt"
rm -f "$WS/ok.txt"

# ---- the judge process of a transaction: a crash, an abort or a hang of the judgement of
# one exec refuses that exec; the supervisor goes on, and the next exec is judged as ever by
# a new judge (an allowed one runs, a refused one is refused by its rule).  A script hides
# the commands from the pre-run check.  Decisions: 0 the pre-run check, then the exec of sh
# (and of the program sh links to), then cat, ls, chmod.
printf 'cat in.txt >/dev/null; echo cat=$?\nls -d . ; echo ls=$?\nchmod u+s in.txt; echo chmod=$?\n' >"$WS/judged.sh"
echo in >"$WS/in.txt"
orig=$(tree_hash "$WS")
n=2
[ "$(basename "$(readlink -f "$(command -v sh)")")" = sh ] || n=3
# what the refusal names: the judge's end (under AddressSanitizer a crash is an exit 1)
declare -A why=([segv]='crashed \(signal 11|exited with status 1' [abort]='crashed \(signal 6'
        [hang]='did not answer within 1500 ms' [kill]='crashed \(signal 9' [enospc]='No space left on device')
for action in segv abort hang kill enospc; do
        t0=$(date +%s)
        out=$(TXBOX_FAILPOINT=judge:$n:$action tx run -- sh judged.sh 2>"$T/err")
        rc=$?
        like "$(tx show --json "$(last_tx)")" "the policy engine failed: [^\"]*(${why[$action]})" \
                "judge $action: the refusal names what happened to the judgement"
        is "$rc" 123 "judge $action at an exec: the transaction ends rolled back (123), not with the supervisor"
        like "$(cat "$T/err")" "rule judgement-failed broken by 'cat in.txt'" "judge $action: the exec it was judging is the refused one"
        like "$out" "ls=0" "judge $action: the next exec is judged by a new judge, and runs"
        like "$out" "chmod=126" "judge $action: and a refused one is refused by its rule"
        rec=$(tx show --json "$(last_tx)")
        like "$rec" '"rule": "judgement-failed".*"outcome": "rolled_back"' "judge $action: the audit row is settled"
        is "$(tree_hash "$WS")" "$orig" "judge $action: nothing of it was committed"
        [ "$action" = hang ] && ok "judge hang: the exec waited for its deadline, not for ever ($(($(date +%s) - t0)) s)" \
                test $(($(date +%s) - t0)) -lt 30
done
left=$(cat /proc/[0-9]*/comm 2>/dev/null | grep -c '^txbox-judge$')
is "$left" 0 "no judge process is left behind"
rm -f "$WS/judged.sh" "$WS/in.txt"

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
