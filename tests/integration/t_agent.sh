#!/bin/bash
# txbox agent against a scripted OpenAI-compatible server on loopback: every tool call is a
# transaction; refusals, rollbacks and errors reach the model as tool results; --atomic.
. "$(dirname "$0")/lib.sh"

if ! command -v python3 >/dev/null; then
        skip "txbox agent tests" "python3 is not installed (the scripted server needs it)"
        done_testing
fi

# The scripted server: answers POSTs with the responses of a script file in order (one JSON
# object a line; {"_status": N, ...} sends that HTTP status, {"_close": true} hangs up), and
# appends each request (path and body) to a log.  It never runs anything itself.
cat >"$T/fake_llm.py" <<'EOF'
import json, sys
from http.server import BaseHTTPRequestHandler, HTTPServer
script_file, log_file, port_file = sys.argv[1:4]
script = [json.loads(l) for l in open(script_file) if l.strip()]
class H(BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        with open(log_file, "a") as f:
            f.write(json.dumps({"path": self.path, "auth": self.headers.get("Authorization"),
                                "body": json.loads(body)}) + "\n")
        r = script.pop(0) if script else {"_status": 500, "error": "script exhausted"}
        if r.get("_close"):
            self.close_connection = True
            return
        status = r.pop("_status", 200)
        headers = r.pop("_headers", {})
        ctype = "application/json"
        if "_sse" in r: # a streamed reply: server-sent events, one chunk each
            out = "".join("data: %s\n\n" % (c if isinstance(c, str) else json.dumps(c)) for c in r["_sse"]).encode()
            ctype = "text/event-stream"
        else:
            out = json.dumps(r).encode()
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)
s = HTTPServer(("127.0.0.1", 0), H)
open(port_file + ".tmp", "w").write(str(s.server_address[1]))
import os; os.rename(port_file + ".tmp", port_file)
s.serve_forever()
EOF

# call ID NAME ARGS-JSON-STRING: one tool call; turn CALL...: one response with these calls.
call() { printf '{"id": "%s", "type": "function", "function": {"name": "%s", "arguments": %s}}' "$1" "$2" "$3"; }
turn() {
        local IFS=,
        printf '{"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null, "tool_calls": [%s]}}]}\n' "$*"
}
final() { printf '{"choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "%s"}}]}\n' "$1"; }
jstr() { python3 -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$1"; }

SRV_PID=""
start_server() { # SCRIPT-FILE: starts the server, sets URL
        rm -f "$T/port" "$T/requests"
        python3 "$T/fake_llm.py" "$1" "$T/requests" "$T/port" &
        SRV_PID=$!
        for _ in $(seq 100); do [ -s "$T/port" ] && break; sleep 0.05; done
        URL="http://127.0.0.1:$(cat "$T/port")"
}
stop_server() { [ -n "$SRV_PID" ] && kill "$SRV_PID" 2>/dev/null; wait "$SRV_PID" 2>/dev/null; SRV_PID=""; }
trap stop_server EXIT
agent() { "$TXBOX" -C "$WS" agent --model test --retry-base-ms 10 --no-baseline "$@"; }
# tool_result N: the content of the tool message answering call id N in the last request.
tool_result() {
        python3 -c 'import json,sys
reqs = [json.loads(l) for l in open(sys.argv[1])]
for m in reqs[-1]["body"]["messages"]:
    if m.get("role") == "tool" and m.get("tool_call_id") == sys.argv[2]: print(m["content"])' "$T/requests" "$1"
}
jq_() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {"d": d}))' "$@"; }

# ---- 1. A replayed session: commit, refusal, errors, retries, a failed command ----
new_ws
orig=$(tree_hash "$WS")
{
        turn "$(call c1 run_command "$(jstr '{"command": "echo hello >hello.txt"}')")"
        turn "$(call c2 run_command "$(jstr '{"command": "rm -rf ~"}')")"
        turn "$(call c3 run_command '"{\"command\": \"ls\""')" "$(call c4 launch_missiles '"{}"')"
        echo '{"_status": 500, "error": "overloaded"}'
        echo '{"_close": true}'
        turn "$(call c5 write_file "$(jstr '{"path": "notes/a.txt", "content": "line1\nline2 $HOME `x`\n"}')")" \
                "$(call c6 read_file "$(jstr '{"path": "../../etc/passwd"}')")"
        turn "$(call c7 run_command "$(jstr '{"command": "echo partial >part.txt; exit 3"}')")"
        # What tr writes is not known before the run: only the exec check sees rm -rf ~.
        turn "$(call c8 run_command "$(jstr '{"command": "printf \"rm -rf ~\\n\" | tr x y >s.sh; sh s.sh"}')")"
        turn "$(call c9 read_file "$(jstr '{"path": "notes/a.txt"}')")"
        final "done: hello.txt written"
} >"$T/script1"
start_server "$T/script1"
# This one measures the overhead baseline (the others skip it) and records the responses.
out=$("$TXBOX" -C "$WS" agent --model test --retry-base-ms 10 --endpoint "$URL/v1/" --summary-json "$T/sum1.json" \
        --record "$T/rec1" "say hello" 2>"$T/err1")
rc=$?
stop_server
is "$rc" 0 "a session that ends in a final answer exits 0"
is "$out" "done: hello.txt written" "the final answer goes to stdout"
is "$(cat "$WS/hello.txt" 2>/dev/null)" "hello" "a harmless command commits"
ok "the failing command was rolled back" test ! -e "$WS/part.txt"
ok "the command whose exec was refused during the run left nothing" test ! -e "$WS/s.sh"
is "$(cat "$WS/notes/a.txt" 2>/dev/null)" "$(printf 'line1\nline2 $HOME `x`')" "write_file writes the content verbatim, parents created"
ok "the home directory survived" test -d "$HOME"
is "$(sed -n 1p "$T/requests" | python3 -c 'import json,sys; print(json.load(sys.stdin)["path"])')" \
        "/v1/chat/completions" "an endpoint with /v1/ posts to /v1/chat/completions"
is "$(wc -l <"$T/requests")" 10 "ten requests: eight turns, a server error and a hang-up retried"
first=$(sed -n 1p "$T/requests")
like "$first" '"name": "run_command".*"name": "read_file".*"name": "write_file"' "the request offers the three tools"
like "$first" '"tool_choice": "auto"' "with tool_choice auto"
like "$first" '"content": "say hello"' "the task is the user message"
r2=$(tool_result c2)
like "$r2" '"outcome": ?"denied"' "the refusal reaches the model as the tool result"
like "$r2" '"rule": ?"rm-root"' "with the rule"
like "$r2" 'recursive deletion' "and the reason"
like "$(tool_result c1)" '"outcome": ?"committed".*"added": ?\["hello.txt"\]' "a commit reports the changed files"
like "$(tool_result c3)" 'arguments of run_command are not a JSON object' "malformed arguments get an error the model can read"
like "$(tool_result c4)" "unknown tool 'launch_missiles'" "an unknown tool is refused"
like "$(tool_result c6)" "climbs out of the workspace" "a path outside the workspace is refused"
r7=$(tool_result c7)
like "$r7" '"exit_status": ?3' "a failing command's status reaches the model"
like "$r7" '"outcome": ?"rolled_back"' "with its rollback"
r8=$(tool_result c8)
like "$r8" '"violations": ?\[\{"rule": ?"rm-root"' "an exec refused during the run comes back as a violation"
like "$(tool_result c9)" 'line1\\nline2' "read_file returns the content"
err1=$(cat "$T/err1")
like "$err1" 'agent: step 1: model replied' "one line per step on stderr"
like "$err1" 'retry 1 of 3' "the server error is retried"
like "$err1" 'stopped by a rule: 2 calls, all kept out of the workspace \(denied before running: rm-root 1; rolled back for a broken rule: rm-root 1\); a rule.s refusal is its judgement, not proof of danger' \
        "the summary: calls stopped by a rule, by rule, without claiming they were dangerous"
like "$(jq_ "$T/sum1.json" 'd["stopped_by_rules"]')" "\\{'rules': \\{'rm-root': \\{'denied': 1, 'broken': 1\\}\\}, 'other_rules': 0, 'asks_refused': 0\\}" \
        "summary JSON: stopped_by_rules by rule"
like "$err1" 'failed states rolled back: +2 of 2 \(100%\)' "the summary: failed states rolled back"
is "$(jq_ "$T/sum1.json" 'd["committed"], d["rolled_back"], d["denied"], d["tool_errors"], d["http_retries"], d["tool_calls"], d["steps"]')" \
        "(3, 2, 1, 3, 2, 9, 8)" "summary JSON: 3 committed, 2 rolled back, 1 denied, 3 tool errors, 2 retries"
like "$(tx log --json)" '"outcome": "denied"' "every call is in the audit log"
echo "# replayed session summary:"; sed -n '/session summary/,$p' "$T/err1" | sed 's/^/#   /'

like "$err1" 'overhead: +[0-9.]+ ms per transaction, [0-9.]+% of the session' "the summary: overhead per transaction in ms and percent"
like "$(jq_ "$T/sum1.json" 'd["overhead"]["per_tx_ms"] > 0 and d["overhead"]["pct_of_wall"] > 0')" True \
        "summary JSON: overhead per transaction is positive"

# --record wrote the model's responses: replaying them gives the same session.
is "$(wc -l <"$T/rec1")" 8 "--record wrote the eight responses"
new_ws
start_server "$T/rec1"
agent --endpoint "$URL" --summary-json "$T/sum1r.json" "say hello" >/dev/null 2>&1
stop_server
is "$(jq_ "$T/sum1r.json" 'd["committed"], d["rolled_back"], d["denied"], d["tool_errors"], d["high_risk"]["intercepted"], d["failed_states"]["rolled_back"]')" \
        "(3, 2, 1, 3, 2, 2)" "the recorded session replays with the same outcomes"
ok "and the same effects" test -s "$WS/hello.txt" -a -s "$WS/notes/a.txt" -a ! -e "$WS/part.txt"

# ---- 2. --atomic: the last step fails, so everything rolls back ----
new_ws
orig=$(tree_hash "$WS")
{
        turn "$(call a1 write_file "$(jstr '{"path": "a.txt", "content": "A"}')")"
        turn "$(call a2 run_command "$(jstr '{"command": "echo b >b.txt && rm docs/b.txt"}')")"
        turn "$(call a3 run_command "$(jstr '{"command": "cat a.txt b.txt"}')")"
        turn "$(call a4 run_command "$(jstr '{"command": "false"}')")"
        final "finished"
} >"$T/script3"
start_server "$T/script3"
agent --endpoint "$URL" --atomic --summary-json "$T/sum3.json" "atomic task" >/dev/null 2>"$T/err3"
rc=$?
stop_server
is "$rc" 1 "--atomic with a failing last step exits 1"
like "$(tool_result a3)" '"stdout": ?"Ab\\n"' "inside the session each step sees the earlier ones"
is "$(tree_hash "$WS")" "$orig" "--atomic rolled everything back"
is "$(jq_ "$T/sum3.json" 'd["session_outcome"], d["committed"], d["rolled_back"]')" "('rolled_back', 0, 4)" \
        "the summary says the session rolled back, all four calls with it"
sid=$(jq_ "$T/sum3.json" 'd["session"]')
like "$(tx show --json "$sid")" '"outcome": "rolled_back"' "the session transaction is rolled back in the log"

# ---- 3. --atomic that succeeds commits everything at once ----
{
        turn "$(call b1 write_file "$(jstr '{"path": "c.txt", "content": "C"}')")"
        turn "$(call b2 run_command "$(jstr '{"command": "echo d >d.txt"}')")"
        final "finished"
} >"$T/script4"
start_server "$T/script4"
agent --endpoint "$URL" --atomic "atomic task" >/dev/null 2>"$T/err4"
rc=$?
stop_server
is "$rc" 0 "--atomic with a successful last step exits 0"
is "$(cat "$WS/c.txt" "$WS/d.txt" 2>/dev/null | tr -d '\n')" "Cd" "and commits everything"

# ---- 4. Server errors: retries run out; a 4xx is not retried ----
printf '{"_status": 503}\n{"_status": 502}\n{"_status": 500}\n' >"$T/script5"
start_server "$T/script5"
agent --endpoint "$URL" --retries 3 "x" >/dev/null 2>"$T/err5"
rc=$?
stop_server
is "$rc" 125 "a server that keeps failing: exit 125"
like "$(cat "$T/err5")" 'txbox: agent: model at .* failed: HTTP 500' "and says why"
is "$(wc -l <"$T/requests")" 3 "--retries 3 means three attempts"
printf '{"_status": 401, "error": {"message": "bad key"}}\n' >"$T/script6"
start_server "$T/script6"
KEY=sk-test agent --endpoint "$URL/v1/chat/completions" --api-key-env KEY "x" >/dev/null 2>"$T/err6"
rc=$?
stop_server
is "$rc" 125 "HTTP 401: exit 125"
is "$(wc -l <"$T/requests")" 1 "a 4xx is not retried"
like "$(cat "$T/requests")" '"auth": "Bearer sk-test"' "--api-key-env sends the key as a bearer token"
like "$(cat "$T/err6")" 'bad key' "the server's error text is shown"
printf '{"choices": []}\n{"choices": []}\n' >"$T/script7"
start_server "$T/script7"
agent --endpoint "$URL" --retries 2 "x" >/dev/null 2>"$T/err7"
rc=$?
stop_server
is "$rc" 125 "a response without choices: exit 125 after the retries"
like "$(cat "$T/err7")" 'no choices\[0\].message' "and says what was wrong"

# ---- 5. Stops: --max-steps and repeated refusals ----
new_ws
for i in 1 2 3 4; do turn "$(call "m$i" run_command "$(jstr '{"command": "true"}')")"; done >"$T/script8"
start_server "$T/script8"
agent --endpoint "$URL" --max-steps 2 "loop" >/dev/null 2>"$T/err8"
rc=$?
stop_server
is "$rc" 1 "--max-steps reached: exit 1"
like "$(cat "$T/err8")" 'stopped: +--max-steps 2 reached after 2 steps' "the summary says so"
is "$(wc -l <"$T/requests")" 2 "no request after the last step"
for i in 1 2 3 4 5; do turn "$(call "r$i" run_command "$(jstr '{"command": "rm -rf ~"}')")"; done >"$T/script9"
start_server "$T/script9"
agent --endpoint "$URL" "destroy" >/dev/null 2>"$T/err9"
rc=$?
stop_server
is "$rc" 1 "repeated refusals stop the loop: exit 1"
like "$(cat "$T/err9")" '3 turns in a row refused' "after three refused turns"
is "$(wc -l <"$T/requests")" 3 "no fourth request"
ok "the home directory survived" test -d "$HOME"

# ---- 6. Protocol details (issue 21): stream false, SSE, Retry-After, finish_reason length,
# calls without an id, write_file's content kept out of the result, calls per turn ----
new_ws
chunk() { printf '{"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": %s, "finish_reason": %s}]}' "$1" "${2:-null}"; }
{
        echo '{"_status": 429, "_headers": {"Retry-After": "1"}, "error": {"message": "slow down"}}'
        printf '{"_sse": [%s, %s, %s, %s, "[DONE]"]}\n' \
                "$(chunk '{"role": "assistant", "tool_calls": [{"index": 0, "id": "s1", "type": "function", "function": {"name": "run_command", "arguments": ""}}]}')" \
                "$(chunk "{\"tool_calls\": [{\"index\": 0, \"function\": {\"arguments\": $(jstr '{"command": "echo stre')}}]}")" \
                "$(chunk "{\"tool_calls\": [{\"index\": 0, \"function\": {\"arguments\": $(jstr 'amed >sse.txt"}')}}]}")" \
                "$(chunk '{}' '"tool_calls"')"
        printf '{"choices": [{"index": 0, "finish_reason": "length", "message": {"role": "assistant", "content": "I will now wri"}}]}\n'
        printf '{"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null, "tool_calls": [{"type": "function", "function": {"name": "write_file", "arguments": %s}}]}}]}\n' \
                "$(jstr "{\"path\": \"big.txt\", \"content\": \"$(head -c 5000 /dev/zero | tr '\0' Q)\"}")"
        final "all done"
} >"$T/script12"
start_server "$T/script12"
out=$(agent --endpoint "$URL" "protocol" 2>"$T/err12")
rc=$?
stop_server
is "$rc" 0 "protocol details: the session ends in a final answer"
is "$out" "all done" "... which is not the reply cut off at the token limit"
like "$(sed -n 1p "$T/requests")" '"stream": false' "every request says \"stream\": false"
like "$(cat "$T/err12")" 'retry 1 of 3 in 1000 ms \(Retry-After\)' "a 429 with Retry-After: 1 is retried after 1 s, as the server asked"
is "$(cat "$WS/sse.txt" 2>/dev/null)" "streamed" "a reply streamed as server-sent events is assembled and its tool call runs"
like "$(sed -n 4p "$T/requests")" 'cut off at the output token limit' "finish_reason length: the model is asked to go on, not taken as done"
req5=$(sed -n 5p "$T/requests")
ids=$(printf '%s' "$req5" | python3 -c 'import json,sys
b = json.load(sys.stdin)["body"]
calls = [c["id"] for m in b["messages"] if m.get("role") == "assistant" for c in (m.get("tool_calls") or [])]
results = [m["tool_call_id"] for m in b["messages"] if m.get("role") == "tool"]
print(calls[-1], results[-1])')
like "$ids" '^(call_txbox_[0-9_]+) \1$' "a tool call without an id gets one, and its result answers that id ($ids)"
is "$(head -c 5000 "$WS/big.txt" 2>/dev/null | wc -c)" 5000 "write_file wrote the 5000 bytes"
wres=$(tool_result "${ids#* }")
ok "... and its result does not echo them back to the model" sh -c "! printf '%s' '$wres' | grep -q QQQQQQQQQQ"
like "$wres" '"argv": \["write_file", "big.txt", "\(5000 bytes\)"\]' "... it names the file and the size instead"

# A response asking for 300 calls with --max-steps 1: one runs, the rest are answered "not run".
new_ws
calls=$(for i in $(seq 300); do printf '%s,' "$(call "x$i" run_command "$(jstr "{\"command\": \"echo $i >>many.txt\"}")")"; done)
turn "${calls%,}" >"$T/script13"
start_server "$T/script13"
agent --endpoint "$URL" --max-steps 1 --summary-json "$T/sum13.json" "many" >/dev/null 2>"$T/err13"
rc=$?
stop_server
is "$rc" 1 "--max-steps 1 with 300 calls in one response: exit 1"
is "$(cat "$WS/many.txt" 2>/dev/null)" "1" "only the turn's first call ran"
is "$(tx log --json -n 400 | grep -o '"tx":' | wc -l)" 1 "one transaction in the log"
is "$(jq_ "$T/sum13.json" 'd["tool_calls"], d["not_run"]')" "(300, 299)" "the summary counts the 299 calls not run"
for i in $(seq 20); do printf '%s,' "$(call "y$i" run_command "$(jstr "{\"command\": \"echo $i >cap$i.txt\"}")")"; done >"$T/calls14"
{ turn "$(sed 's/,$//' "$T/calls14")"; final "ok"; } >"$T/script14"
start_server "$T/script14"
agent --endpoint "$URL" --max-calls 5 "capped" >/dev/null 2>"$T/err14"
stop_server
is "$(ls "$WS" | grep -c '^cap')" 5 "--max-calls 5: five of twenty calls in a turn ran"
like "$(tool_result y6)" 'not run: at most 5 tool calls per turn' "the others are answered, saying why"

# ---- 7. Usage ----
"$TXBOX" -C "$WS" agent --model m "x" >/dev/null 2>&1
is "$?" 2 "no --endpoint: usage error"
"$TXBOX" -C "$WS" agent --endpoint http://127.0.0.1:9 --model m --api-key-env TXBOX_NO_SUCH_VAR "x" >/dev/null 2>&1
is "$?" 2 "an unset --api-key-env variable: usage error"
agent --endpoint "http://127.0.0.1:1" --retries 2 "x" >/dev/null 2>"$T/err10"
is "$?" 125 "nothing listening: exit 125 after the retries"

# ---- 8. The model's text reaches the terminal escaped (issue 18: output forging) ----
new_ws
{
        kv() { python3 -c 'import json,sys; print(json.dumps(json.dumps(dict(zip(sys.argv[1::2], sys.argv[2::2])))))' "$@"; }
        turn "$(call f1 run_command "$(kv command "$(printf 'echo hi # \033]0;TITLE\007\033[2K\r')")")" \
                "$(call f2 write_file "$(kv path "$(printf 'n\033[1Ame')" content x)")"
        printf '{"choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": %s}}]}\n' \
                "$(jstr "$(printf 'done\n\033]52;c;cGFzdGU=\007\033[2J\rok')")"
} >"$T/script11"
start_server "$T/script11"
out=$(agent --endpoint "$URL" "forge" 2>"$T/err11")
stop_server
ctl() { LC_ALL=C grep -c "$(printf '[\001-\010\013-\037\177]')" "$@"; }
is "$(ctl "$T/err11")" 0 "the tool labels on stderr carry no control byte"
like "$(cat "$T/err11")" 'TITLE\\x07' "... and show them escaped"
is "$(printf '%s\n' "$out" | ctl)" 0 "the final answer on stdout carries no control byte"
is "$(printf '%s\n' "$out" | head -1)" "done" "... its own lines pass"
like "$out" '\\x1b\]52;c;cGFzdGU=\\x07\\x1b\[2J\\rok' "... its controls are shown escaped"

# ---- 9. Many tool calls on one file: each begins right after the commit before it, often in
# the same clock tick, and must not take it for someone else's change (149 of 300 did end in
# 122, "changed since tx began").  300 calls under TXBOX_STRESS=1, 60 otherwise ----
new_ws
ncalls=60
[ -n "${TXBOX_STRESS:-}" ] && ncalls=300
for ((t = 0; t < ncalls / 10; t++)); do
        calls=()
        for ((c = 1; c <= 10; c++)); do
                cmd=$(jstr "{\"command\": \"echo $t.$c >>one.txt\"}")
                calls+=("$(call "s$((t * 10 + c))" run_command "$cmd")")
        done
        turn "${calls[@]}"
done >"$T/script12"
final "appended" >>"$T/script12"
start_server "$T/script12"
agent --endpoint "$URL" --max-steps $((ncalls + 10)) --summary-json "$T/sum12.json" "append" \
        >/dev/null 2>"$T/err12"
rc=$?
stop_server
is "$rc" 0 "$ncalls tool calls appending to one file: the session ends in its answer"
is "$(jq_ "$T/sum12.json" 'd["committed"], d["rolled_back"], d["tool_calls"]')" "($ncalls, 0, $ncalls)" \
        "... every one of the $ncalls calls committed, none rolled back"
is "$(wc -l <"$WS/one.txt")" "$ncalls" "... and the file has all $ncalls lines"
grep -m1 'conflict' "$T/err12" | sed 's/^/# /'

# ---- 9b. Compact results (issue 31): a 5,000-file change reaches the model as counts,
# directories and a few names, within the result budget (4 KB beyond stdout and stderr), and
# says first what happened; a rollback says why in its first field ----
new_ws
{
        turn "$(call g1 run_command "$(jstr '{"command": "mkdir -p gen/a && cd gen/a && seq 5000 | xargs touch"}')")"
        turn "$(call g2 run_command "$(jstr '{"command": "rm -rf gen"}')")"
        turn "$(call g3 run_command "$(jstr '{"command": "mkdir -p big && cd big && seq 3000 | xargs touch"}')")"
        final "generated"
} >"$T/script13"
start_server "$T/script13"
agent --endpoint "$URL" "generate" >/dev/null 2>"$T/err13"
rc=$?
agent_budget() { # the tool result less its stdout and stderr, in bytes
        printf '%s' "$1" | python3 -c 'import json,sys; d=json.load(sys.stdin); d["stdout"]=d["stderr"]=""; print(len(json.dumps(d, ensure_ascii=False, separators=(", ", ": ")).encode()))'
}
g1=$(tool_result g1)
is "$rc" 0 "a 5,000-file change through txbox agent: the session ends in its answer"
ok "the tool result of a 5,000-file change stays within the 4 KB budget ($(printf '%s' "$g1" | wc -c) bytes, $(agent_budget "$g1") without its output)" \
        test "$(printf '%s' "$g1" | wc -c)" -le 4096
like "$g1" '^\{"summary": "committed tx [0-9a-f]+: exit status 0, 5002 changes \(5002 added\)"' \
        "... its first field says what happened, with the counts"
like "$g1" '"change_counts": \{"added": 5002, "modified": 0, "deleted": 0\}, "changes_truncated": true' \
        "... the counts are whole, the list is marked cut"
like "$g1" '"added": \["gen", "gen/a", "gen/a/1"' "... and it still names paths"
ok "every file was created all the same" test "$(ls "$WS/gen/a" | wc -l)" -eq 5000
g2=$(tool_result g2)
ok "a rolled-back deletion of 5,000 files: within the budget too ($(printf '%s' "$g2" | wc -c) bytes)" \
        test "$(printf '%s' "$g2" | wc -c)" -le 4096
like "$g2" '^\{"summary": "rolled back tx [0-9a-f]+: rule effect-mass-deletion broken' \
        "... its first field says it was rolled back and why"
ok "... and nothing was deleted" test -e "$WS/gen/a/5000"
stop_server
{
        turn "$(call h1 run_command "$(jstr '{"command": "mkdir -p more && cd more && seq 3000 | xargs touch"}')")"
        final "generated"
} >"$T/script14"
start_server "$T/script14"
agent --endpoint "$URL" --result-budget 100000 "generate" >/dev/null 2>&1
stop_server
like "$(tool_result h1)" '"changes_truncated": false' "--result-budget 100000: 3,000 paths fit, none cut"
ok "... every one listed" test "$(tool_result h1 | grep -o '"more/[0-9]*"' | wc -l)" -eq 3000

# ---- 10. kill -9 of txbox agent at a random moment: mid-command, mid-savepoint, mid-commit
# of the session (--atomic) or of a step (one transaction each).  After txbox recover the
# workspace is whole, no row is left running or committing, and a session left pending
# commits whole.  TXBOX_STRESS=1: 30 kills each. ----
KBIG='for i in $(seq 1 300); do echo $i >g$i; done; echo big >>README; rm docs/a.txt'
{
        turn "$(call k1 run_command "$(jstr '{"command": "echo one >one.txt"}')")"
        turn "$(call k2 run_command "$(jstr "$(python3 -c 'import json,sys; print(json.dumps({"command": sys.argv[1]}))' \
                "$KBIG")")")"
        final "done"
} >"$T/script13"
new_ws
korig=$(tree_hash "$WS")
tx run -- sh -c 'echo one >one.txt' >/dev/null; k1=$(tree_hash "$WS")
tx run -- sh -c "$KBIG" >/dev/null; k1big=$(tree_hash "$WS")
ktrials=3
[ -n "${TXBOX_STRESS:-}" ] && ktrials=30
settled() { ! tx log --json -n 50 | grep -qE '"outcome": *"(running|committing)"'; }
bad=0 seen=""
for mode in --atomic --no-atomic; do
        new_ws
        start_server "$T/script13"
        t0=$(date +%s%N)
        agent --endpoint "$URL" $([ "$mode" = --atomic ] && echo --atomic) "k" >/dev/null 2>&1
        agent_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
        stop_server
        [ "$(tree_hash "$WS")" = "$k1big" ] ||
                { echo "# agent $mode: the uninterrupted run did not commit it all"; bad=$((bad + 1)); }
        for i in $(seq 1 $ktrials); do
                new_ws
                start_server "$T/script13"
                # (txbox itself in the background, not the agent function: $! must be its pid)
                "$TXBOX" -C "$WS" agent --model test --retry-base-ms 10 --no-baseline --endpoint "$URL" \
                        $([ "$mode" = --atomic ] && echo --atomic) "k" >/dev/null 2>&1 &
                pid=$!
                d=$((RANDOM % (agent_ms + 20) + 1))
                sleep "$(printf '%d.%03d' $((d / 1000)) $((d % 1000)))"
                kill -9 "$pid" 2>/dev/null
                wait "$pid" 2>/dev/null
                stop_server
                tx recover >/dev/null
                settled || { echo "# agent $mode trial $i: a row is not settled"; bad=$((bad + 1)); }
                for id in $(tx log --json -n 50 | grep -o '"tx": *"[0-9a-f]*"[^}]*"outcome": *"pending"' |
                            grep -o '^"tx": *"[0-9a-f]*"' | grep -o '[0-9a-f]\{10\}'); do
                        e=$(tx commit "$id" 2>&1) ||
                                { echo "# agent $mode trial $i: $id does not commit: $e"; bad=$((bad + 1)); }
                done
                h=$(tree_hash "$WS")
                case "$h" in "$korig") seen="$seen 0" ;; "$k1") seen="$seen 1" ;; "$k1big") seen="$seen 2" ;;
                *) echo "# agent $mode trial $i (kill at $d ms): a mixed tree"; bad=$((bad + 1)) ;; esac
        done
done
echo "# agent kills ($ktrials trials each, --atomic and not): steps kept:$seen"
ok "kill -9 of txbox agent mid-command and mid-commit: whole every time, rows settled" test "$bad" -eq 0

# ---- an "ask" nobody can answer is refused, and not counted as a dangerous call ----
new_ws
{
        turn "$(call q1 run_command "$(jstr '{"command": "npm publish"}')")"
        turn "$(call q2 run_command "$(jstr '{"command": "echo ok >ok.txt"}')")"
        final "published nothing"
} >"$T/script_ask"
start_server "$T/script_ask"
agent --endpoint "$URL" --summary-json "$T/sum_ask.json" "publish" >/dev/null 2>"$T/err_ask"
stop_server
like "$(tool_result q1)" '"outcome": ?"denied"' "npm publish without --approve: refused"
like "$(cat "$T/err_ask")" 'stopped by a rule: none' "an ask refused is not a call stopped as dangerous"
like "$(cat "$T/err_ask")" 'asks refused: 1 \(the policy asks; without --approve nobody answers\)' "it is counted as an ask"
is "$(jq_ "$T/sum_ask.json" 'd["denied"], d["high_risk"]["calls"], d["stopped_by_rules"]["asks_refused"]')" "(1, 0, 1)" \
        "summary JSON: denied 1, none high-risk, 1 ask refused"

done_testing
