#!/bin/bash
# Inside the jail (tests/clients/run.sh): every mode docs/INTEGRATIONS.md documents, driven by
# its real client against the scripted model server.  For each: an allowed command runs (as a
# committed transaction where the mode makes one), a denied one is blocked and leaves nothing,
# and a judgement that crashes (TXBOX_FAILPOINT=judge:0:segv) blocks.  Only paths under $T
# are touched.
set -u
cd "$T" || exit 1
_n=0 _failed=0 _h=0
ok() { local d=$1; shift; _n=$((_n + 1)); if "$@"; then echo "ok $_n - $d"; else echo "not ok $_n - $d"; _failed=$((_failed + 1)); fi; }
is() { _n=$((_n + 1)); if [ "$1" = "$2" ]; then echo "ok $_n - $3"; else
        echo "not ok $_n - $3"; echo "#   got:      '$1'"; echo "#   expected: '$2'"; _failed=$((_failed + 1)); fi; }
like() { _n=$((_n + 1)); if printf '%s' "$1" | grep -qE -- "$2"; then echo "ok $_n - $3"; else
        echo "not ok $_n - $3"; echo "#   got: '$(printf '%s' "$1" | head -c 600)'"; echo "#   want match: '$2'"; _failed=$((_failed + 1)); fi; }
skip() { _n=$((_n + 1)); echo "ok $_n - $1 # SKIP $2"; }
# TXBOX_CLIENTS_ONLY="claude codex-mcp ...": only those sections ("claude" is all of
# claude-hook, claude-prefix, claude-mcp).
want() {
        local w
        [ -z "${ONLY:-}" ] && return 0
        for w in $ONLY; do [[ $w == "$1" || $w == "$1"-* || $1 == "$w"-* ]] && return 0; done
        return 1
}

export PATH="$T/bin:$PATH"
CLAUDE="$T/claude/node_modules/.bin/claude"
CODEX="$T/codex/node_modules/.bin/codex"
GEMINI="$T/gemini/node_modules/.bin/gemini"
INSPECTOR="$T/inspector/node_modules/.bin/mcp-inspector"
DENY='git push --force origin main; echo ran >denied.txt'
CRASH=TXBOX_FAILPOINT=judge:0:segv

# ---- the scripted model server ----
SRV=""
serve() { # serve STEP-JSON...: a session of these tool calls, then "done"
        local steps
        steps=$(IFS=,; printf '%s' "$*")
        printf '{"steps": [%s], "final": "done"}\n' "$steps" >"$T/script.json"
        [ -n "$SRV" ] && return 0
        rm -f "$T/port"
        node "$T/tests/model_server.mjs" "$T/script.json" "$T/requests" "$T/port" 2>"$T/model_server.err" &
        SRV=$!
        # node can take seconds to start on a loaded machine: wait up to 60 s, then give up
        for _ in $(seq 600); do [ -s "$T/port" ] && break; kill -0 "$SRV" 2>/dev/null || break; sleep 0.1; done
        if [ ! -s "$T/port" ]; then
                echo "Bail out! the scripted model server did not start: $(head -c 300 "$T/model_server.err")"
                exit 1
        fi
        URL="http://127.0.0.1:$(cat "$T/port")"
}
trap '[ -n "$SRV" ] && kill "$SRV" 2>/dev/null' EXIT
step() { printf '{"call": {"name": "%s", "input": %s}}' "$1" "$2"; }
jstr() { node -e 'process.stdout.write(JSON.stringify(process.argv[1]))' "$1"; }
mark() { : >"$T/requests"; }
# What the model was told: the tool results of the last request, as text.
told() { node -e '
const lines = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n");
const b = JSON.parse(lines[lines.length - 1]).body;
const out = [];
for (const m of b.messages ?? []) for (const c of (Array.isArray(m.content) ? m.content : []))
  if (c.type === "tool_result") out.push(typeof c.content === "string" ? c.content : JSON.stringify(c.content));
for (const i of b.input ?? []) if (i.type === "function_call_output" || i.type === "custom_tool_call_output") out.push(JSON.stringify(i.output));
for (const c of b.contents ?? []) for (const p of c.parts ?? []) if (p.functionResponse) out.push(JSON.stringify(p.functionResponse.response));
console.log(out.join("\n---\n"));' "$T/requests" 2>/dev/null; }
newws() { WS="$T/ws-$1"; rm -rf "$WS"; mkdir -p "$WS/.git"; echo keep >"$WS/README"; }
# The log is in the state under the client's HOME ($H): a fresh one per session.
ntx() { HOME="$H" txbox -C "$WS" log --json -n 1000 | sed -n 's/"outcome": "\([a-z_]*\)"/\n@\1\n/gp' |
        sed -n 's/^@//p' | sort | uniq -c | tr -s ' ' | tr '\n' ';'; } # " 3 committed; 1 rolled_back;"
lastrec() { HOME="$H" txbox -C "$WS" log --json -n 1; }
# The agents' own edits (issue 31), checked the same way for each client: a command before
# the session and one after it touch the file the session edits; the edits are in the log,
# and the command after, the edits and the command before are undone in turn, none refused,
# the file back as it was.  edit_ws NAME: the workspace; edit_before: the command before.
txb() { HOME="$H" txbox -C "$WS" "$@"; }
edit_ws() { newws "$1"; printf 'one\n' >"$WS/f.txt"; }
edit_before() { txb run -- sh -c 'echo two >>f.txt' >/dev/null 2>&1; }
edit_checks() { # CLIENT COMMAND-PATTERN: after the session
        local c=$1
        like "$(txb log)" "committed .*$2" "$c edit: the edit is a committed transaction in txbox log"
        is "$(txb log --json | grep -o '"outcome": "committed"' | wc -l)" "$3" "$c edit: ... beside the command ($3 committed)"
        txb run -- sh -c 'echo three >>f.txt' >/dev/null 2>&1
        local u1 u2 u3
        u1=$(txb undo 2>&1); is "$?" 0 "$c edit: txbox undo of a command after the edit ($u1)"
        u2=$(txb undo 2>&1); is "$?" 0 "$c edit: txbox undo takes the edit back ($u2)"
        [ "$3" -gt 2 ] && { u2=$(txb undo 2>&1); is "$?" 0 "$c edit: ... and the second one ($u2)"; }
        is "$(cat "$WS/f.txt")" "$(printf 'one\ntwo')" "$c edit: ... the file as the command before it left it"
        ok "$c edit: ... the new file gone" test ! -e "$WS/sub/new.txt" -a ! -e "$WS/sub"
        u3=$(txb undo 2>&1); is "$?" 0 "$c edit: the undo of the command before the edit is not refused ($u3)"
        is "$(cat "$WS/f.txt")" "one" "$c edit: ... the file back as it was"
}

# ================= Claude Code =================
claude_home() { # fresh user settings
        _h=$((_h + 1)); H="$T/home-claude-$_h"; mkdir -p "$H"
}
claude() { # claude [-u VAR] [ENV=V...]: a -p session in $WS
        (cd "$WS" && env "$@" HOME="$H" ANTHROPIC_BASE_URL="$URL" ANTHROPIC_API_KEY=sk-test DISABLE_TELEMETRY=1 \
                CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_AUTOUPDATER=1 \
                timeout 180 "$CLAUDE" -p "do the task" --dangerously-skip-permissions --output-format json \
                >"$T/claude.out" 2>"$T/claude.err")
}
claude_hook_settings() {
        mkdir -p "$WS/.claude"
        cat >"$WS/.claude/settings.json" <<'EOF'
{
  "hooks": {
    "PreToolUse": [
      { "matcher": "Bash", "hooks": [{ "type": "command", "command": "txbox hook claude-code", "timeout": 30 }] }
    ]
  }
}
EOF
}

if want claude && [ -x "$CLAUDE" ]; then
        if want claude-hook; then
        # -- hook only: the policy decides before Claude Code's Bash runs the command --
        claude_home; newws claude-hook; claude_hook_settings
        serve "$(step Bash '{"command": "echo allowed >allowed.txt", "description": "a"}')" \
                "$(step Bash "{\"command\": $(jstr "$DENY"), \"description\": \"d\"}")"
        mark; claude
        is "$(cat "$WS/allowed.txt" 2>/dev/null)" "allowed" "claude-code hook: an allowed command runs"
        ok "claude-code hook: the denied command did not run" test ! -e "$WS/denied.txt"
        like "$(told)" "txbox policy rule git-push-force" "claude-code hook: Claude Code told the model the rule"
        serve "$(step Bash '{"command": "echo crash >crash.txt", "description": "c"}')"
        mark; claude "$CRASH"
        ok "claude-code hook: a hook whose judgement crashes blocks the command" test ! -e "$WS/crash.txt"
        like "$(told)" "txbox fails closed" "claude-code hook: ... and says so"

        fi; if want claude-prefix; then
        # -- shell prefix (+ hook): each Bash command one transaction, cd carried over --
        for tmpmode in set unset; do
                claude_home; newws "claude-prefix-$tmpmode"; claude_hook_settings
                mkdir -p "$WS/sub"
                serve "$(step Bash '{"command": "cd sub && echo one >one.txt", "description": "a"}')" \
                        "$(step Bash '{"command": "pwd >where.txt; echo two >two.txt", "description": "b"}')" \
                        "$(step Bash "{\"command\": $(jstr "touch x.txt; exit 3"), \"description\": \"f\"}")"
                mark
                if [ $tmpmode = set ]; then
                        claude CLAUDE_CODE_SHELL_PREFIX="$T/bin/txbox-prefix"
                else
                        claude -u TMPDIR CLAUDE_CODE_SHELL_PREFIX="$T/bin/txbox-prefix"
                fi
                is "$(cat "$WS/sub/one.txt" 2>/dev/null)" "one" "claude-code prefix (TMPDIR $tmpmode): an allowed command's change is in the workspace"
                is "$(cat "$WS/sub/where.txt" 2>/dev/null)" "$WS/sub" "claude-code prefix (TMPDIR $tmpmode): cd carried over to the next command"
                like "$(ntx)" "^ 2 committed; 1 rolled_back;$" "claude-code prefix (TMPDIR $tmpmode): ... each a transaction (2 committed, 1 rolled back), the hook passed through (no transaction of its own)"
                like "$(ntx)" " 1 rolled_back;" "claude-code prefix (TMPDIR $tmpmode): a failing command was rolled back"
                ok "claude-code prefix (TMPDIR $tmpmode): ... leaving nothing" test ! -e "$WS/sub/x.txt"
        done
        claude_home; newws claude-prefix
        serve "$(step Bash "{\"command\": $(jstr "$DENY"), \"description\": \"d\"}")"
        mark; claude CLAUDE_CODE_SHELL_PREFIX="$T/bin/txbox-prefix"
        ok "claude-code prefix: a denied command did not run" test ! -e "$WS/denied.txt"
        like "$(lastrec)" '"outcome": "denied", .*|"rule": "git-push-force"' "claude-code prefix: ... refused by the policy, in the log"
        like "$(told)" "denied by rule git-push-force" "claude-code prefix: ... and the model was told why"
        serve "$(step Bash '{"command": "echo crash >crash.txt", "description": "c"}')"
        mark; claude CLAUDE_CODE_SHELL_PREFIX="$T/bin/txbox-prefix" "$CRASH"
        ok "claude-code prefix: a judgement that crashes refuses the command" test ! -e "$WS/crash.txt"
        like "$(told)" "judgement-failed" "claude-code prefix: ... naming judgement-failed"

        fi; if want claude-mcp; then
        # -- MCP server: the project's .mcp.json, Bash denied.  Claude Code ignores the project's
        # permissions.allow and leaves .mcp.json servers pending until the folder is trusted
        # (the trust dialog of an interactive run, recorded in ~/.claude.json) --
        claude_home; newws claude-mcp
        mkdir -p "$WS/.claude"
        claude_mcp_json() { # [ENV-JSON]
                printf '{ "mcpServers": { "txbox": { "type": "stdio", "command": "txbox", "args": ["mcp"]%s } } }\n' \
                        "${1:+, \"env\": $1}" >"$WS/.mcp.json"
        }
        claude_mcp_json
        printf '{"projects": {%s: {"hasTrustDialogAccepted": true}}}\n' "$(jstr "$WS")" >"$H/.claude.json"
        echo '{ "enableAllProjectMcpServers": true }' >"$WS/.claude/settings.local.json"
        cat >"$WS/.claude/settings.json" <<'EOF'
{
  "permissions": { "allow": ["mcp__txbox"], "deny": ["Bash"] }
}
EOF
        serve "$(step '~run_command' '{"command": "echo m >mcp.txt"}')" \
                "$(step '~run_command' "{\"command\": $(jstr "$DENY")}")"
        mark; claude
        is "$(cat "$WS/mcp.txt" 2>/dev/null)" "m" "claude-code mcp: run_command ran the allowed command"
        like "$(ntx)" " 1 committed;" "claude-code mcp: ... as a committed transaction"
        ok "claude-code mcp: the denied command did not run" test ! -e "$WS/denied.txt"
        like "$(told)" '\\"outcome\\": \\"denied\\"|"outcome": "denied"' "claude-code mcp: ... the model got the refusal"
        serve "$(step '~run_command' '{"command": "echo crash >crash.txt"}')"
        claude_mcp_json '{"TXBOX_FAILPOINT": "judge:0:segv"}'
        mark; claude
        ok "claude-code mcp: a judgement that crashes refuses the command" test ! -e "$WS/crash.txt"
        like "$(told)" "judgement-failed" "claude-code mcp: ... naming judgement-failed"

        fi; if want claude-edit; then
        # -- the edit tools: PreToolUse judges and captures, PostToolUse records --
        claude_home; edit_ws claude-edit; mkdir -p "$WS/.claude"
        cat >"$WS/.claude/settings.json" <<'EOF2'
{
  "hooks": {
    "PreToolUse": [
      { "matcher": "Bash|Edit|Write|MultiEdit|NotebookEdit", "hooks": [{ "type": "command", "command": "txbox hook claude-code", "timeout": 30 }] }
    ],
    "PostToolUse": [
      { "matcher": "Edit|Write|MultiEdit|NotebookEdit", "hooks": [{ "type": "command", "command": "txbox hook claude-code", "timeout": 30 }] }
    ],
    "PostToolUseFailure": [
      { "matcher": "Edit|Write|MultiEdit|NotebookEdit", "hooks": [{ "type": "command", "command": "txbox hook claude-code", "timeout": 30 }] }
    ]
  }
}
EOF2
        edit_before
        serve "$(step Read "{\"file_path\": $(jstr "$WS/f.txt")}")" \
                "$(step Edit "{\"file_path\": $(jstr "$WS/f.txt"), \"old_string\": \"two\", \"new_string\": \"TWO\"}")" \
                "$(step Write "{\"file_path\": $(jstr "$WS/sub/new.txt"), \"content\": \"new\\n\"}")" \
                "$(step Write "{\"file_path\": $(jstr "$WS/.git/hooks/pre-commit"), \"content\": \"evil\"}")"
        mark; claude
        is "$(cat "$WS/f.txt")" "$(printf 'one\nTWO')" "claude-code edit: Claude Code's Edit ran"
        ok "claude-code edit: the Write of a git hook was refused" test ! -e "$WS/.git/hooks/pre-commit"
        like "$(told)" "txbox policy rule git-internals" "claude-code edit: ... and the model was told the rule"
        like "$(txb diff "$(txb log --json -n 3 | sed -n 's/.*"tx": "\([0-9a-f]*\)", "argv": \["claude-code", "Edit".*/\1/p')")" '\+TWO' \
                "claude-code edit: txbox diff shows the Edit"
        edit_checks claude-code "claude-code (Edit f.txt|Write sub/new.txt)" 3
        fi
else
        skip "Claude Code" "not installed or not chosen"
fi

# ================= Codex CLI =================
codex_home() { # CONFIG-EXTRA: a fresh CODEX_HOME with the scripted provider
        _h=$((_h + 1)); H="$T/home-codex-$_h"; mkdir -p "$H/.codex"
        cat >"$H/.codex/config.toml" <<EOF
model = "${CODEX_MODEL:-gpt-5.1-codex}"
model_provider = "scripted"
approval_policy = "never"
sandbox_mode = "danger-full-access"
[model_providers.scripted]
name = "scripted"
base_url = "$URL/v1"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
$1
EOF
}
codex() { # codex [FLAGS...]
        (cd "$WS" && env HOME="$H" CODEX_HOME="$H/.codex" ${CODEX_ENV:-} timeout 180 "$CODEX" exec --skip-git-repo-check "$@" \
                "do the task" >"$T/codex.out" 2>"$T/codex.err")
}
if want codex && [ -x "$CODEX" ]; then
        serve # (the URL goes into the config)
        if want codex-hook; then
        # -- hook: needs the hooks feature and the user's trust --
        newws codex-hook
        codex_home "[features]
hooks = true"
        cat >"$H/.codex/hooks.json" <<'EOF'
{
  "hooks": {
    "PreToolUse": [
      { "matcher": "Bash", "hooks": [{ "type": "command", "command": "txbox hook codex", "timeout": 30 }] }
    ]
  }
}
EOF
        serve "$(step exec_command "{\"cmd\": $(jstr "$DENY")}")"
        mark; codex
        ok "codex hook, not trusted: codex exec skips the hook silently (the docs' warning holds)" test -e "$WS/denied.txt"
        rm -f "$WS/denied.txt"
        serve "$(step exec_command '{"cmd": "echo allowed >allowed.txt"}')" "$(step exec_command "{\"cmd\": $(jstr "$DENY")}")"
        mark; codex --dangerously-bypass-hook-trust
        is "$(cat "$WS/allowed.txt" 2>/dev/null)" "allowed" "codex hook, trusted: an allowed command runs"
        ok "codex hook, trusted: the denied command did not run" test ! -e "$WS/denied.txt"
        like "$(told)" "git-push-force" "codex hook: the model was told the rule"
        serve "$(step exec_command '{"cmd": "echo crash >crash.txt"}')"
        mark; CODEX_ENV=$CRASH codex --dangerously-bypass-hook-trust
        ok "codex hook: a hook whose judgement crashes blocks the command" test ! -e "$WS/crash.txt"

        fi; if want codex-mcp; then
        # -- MCP server: tools approved for the server, the workspace named --
        newws codex-mcp
        codex_mcp_home() { # [ENV-TOML]: Codex passes MCP servers only a few variables of its own
                codex_home "[mcp_servers.txbox]
command = \"txbox\"
args = [\"-C\", \"$WS\", \"mcp\"]
tool_timeout_sec = 600
default_tools_approval_mode = \"approve\"
${1:+env = $1}"
        }
        codex_mcp_home
        serve "$(step '~run_command' '{"command": "echo m >mcp.txt"}')" "$(step '~run_command' "{\"command\": $(jstr "$DENY")}")"
        mark; codex
        is "$(cat "$WS/mcp.txt" 2>/dev/null)" "m" "codex mcp: run_command ran the allowed command"
        like "$(ntx)" " 1 committed;" "codex mcp: ... as a committed transaction"
        ok "codex mcp: the denied command did not run" test ! -e "$WS/denied.txt"
        like "$(told)" 'denied' "codex mcp: ... the model got the refusal"
        serve "$(step '~run_command' '{"command": "echo crash >crash.txt"}')"
        codex_mcp_home '{ TXBOX_FAILPOINT = "judge:0:segv" }'
        mark; codex
        ok "codex mcp: a judgement that crashes refuses the command" test ! -e "$WS/crash.txt"
        like "$(told)" "judgement-failed" "codex mcp: ... naming judgement-failed"

        fi; if want codex-edit; then
        # -- apply_patch (offered to models that take it: gpt-5.5), PreToolUse and PostToolUse --
        edit_ws codex-edit
        CODEX_MODEL=gpt-5.5 codex_home "[features]
hooks = true"
        cat >"$H/.codex/hooks.json" <<'EOF2'
{
  "hooks": {
    "PreToolUse": [
      { "matcher": "Bash|apply_patch", "hooks": [{ "type": "command", "command": "txbox hook codex", "timeout": 30 }] }
    ],
    "PostToolUse": [
      { "matcher": "apply_patch", "hooks": [{ "type": "command", "command": "txbox hook codex", "timeout": 30 }] }
    ]
  }
}
EOF2
        edit_before
        patch='*** Begin Patch
*** Update File: f.txt
@@
 one
-two
+TWO
*** Add File: sub/new.txt
+new
*** End Patch'
        evil='*** Begin Patch
*** Add File: .git/hooks/pre-commit
+evil
*** End Patch'
        serve "$(step apply_patch "{\"input\": $(jstr "$patch")}")" "$(step apply_patch "{\"input\": $(jstr "$evil")}")"
        mark; codex --dangerously-bypass-hook-trust
        is "$(cat "$WS/f.txt")" "$(printf 'one\nTWO')" "codex edit: apply_patch ran"
        ok "codex edit: a patch adding a git hook was refused" test ! -e "$WS/.git/hooks/pre-commit"
        like "$(told)" "git-internals" "codex edit: ... and the model was told the rule"
        edit_checks codex "codex apply_patch f.txt sub/new.txt" 2
        fi
else
        skip "Codex CLI" "not installed or not chosen"
fi

# ================= Gemini CLI =================
gemini_home() { # SETTINGS-JSON [POLICY-TOML]: user settings (they apply in untrusted folders too)
        _h=$((_h + 1)); H="$T/home-gemini-$_h"; mkdir -p "$H/.gemini/policies"
        printf '%s\n' "$1" >"$H/.gemini/settings.json"
        [ -n "${2:-}" ] && printf '%s\n' "$2" >"$H/.gemini/policies/txbox.toml"
        return 0
}
gemini() { # gemini [FLAGS...]
        (cd "$WS" && env HOME="$H" GEMINI_API_KEY=test GOOGLE_GEMINI_BASE_URL="$URL" ${GEMINI_ENV:-} \
                timeout 180 "$GEMINI" -p "do the task" --yolo -m gemini-2.5-flash "$@" >"$T/gemini.out" 2>"$T/gemini.err")
}
if want gemini && [ -x "$GEMINI" ]; then
        if want gemini-hook; then
        # -- hook, in the user's settings: it runs in trusted and untrusted folders alike --
        newws gemini-hook
        gemini_home '{
  "security": { "auth": { "selectedType": "gemini-api-key" } },
  "hooks": {
    "BeforeTool": [
      { "matcher": "run_shell_command", "hooks": [{ "type": "command", "command": "txbox hook gemini", "timeout": 30000 }] }
    ]
  }
}'
        serve "$(step run_shell_command '{"command": "echo allowed >allowed.txt"}')" \
                "$(step run_shell_command "{\"command\": $(jstr "$DENY")}")"
        mark; GEMINI_ENV=GEMINI_CLI_TRUST_WORKSPACE=true gemini
        is "$(cat "$WS/allowed.txt" 2>/dev/null)" "allowed" "gemini hook (trusted folder): an allowed command runs"
        ok "gemini hook (trusted folder): the denied command did not run" test ! -e "$WS/denied.txt"
        like "$(told)" "git-push-force" "gemini hook: the model was told the rule"
        serve "$(step run_shell_command "{\"command\": $(jstr "$DENY")}")"
        mark; gemini --skip-trust
        ok "gemini hook (untrusted folder, --skip-trust): the user-level hook still blocks" test ! -e "$WS/denied.txt"
        serve "$(step run_shell_command '{"command": "echo crash >crash.txt"}')"
        mark; GEMINI_ENV="GEMINI_CLI_TRUST_WORKSPACE=true $CRASH" gemini
        ok "gemini hook: a hook whose judgement crashes blocks the command" test ! -e "$WS/crash.txt"
        # the docs' warning: a project's hook in an untrusted folder is ignored without a word
        newws gemini-project-hook
        gemini_home '{ "security": { "auth": { "selectedType": "gemini-api-key" } } }'
        mkdir -p "$WS/.gemini"
        printf '{"hooks": {"BeforeTool": [{"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "txbox hook gemini", "timeout": 30000}]}]}}\n' \
                >"$WS/.gemini/settings.json"
        like "$(cd "$WS" && HOME="$H" txbox doctor 2>&1)" "warning  Gemini CLI" "gemini: txbox doctor warns about the project hook of an untrusted folder"
        serve "$(step run_shell_command "{\"command\": $(jstr "$DENY")}")"
        mark; gemini --skip-trust
        ok "gemini hook in an untrusted folder's project settings (--skip-trust): ignored, the command ran (the docs' warning holds)" \
                test -e "$WS/denied.txt"

        fi; if want gemini-mcp; then
        # -- MCP server: the built-in shell removed by a user policy, so that an untrusted
        # folder (no MCP servers there) leaves no shell at all rather than an unguarded one --
        newws gemini-mcp
        gemini_mcp_home() { # [ENV-JSON]
                gemini_home '{
  "security": { "auth": { "selectedType": "gemini-api-key" } },
  "mcpServers": { "txbox": { "command": "txbox", "args": ["mcp"], "cwd": ".", "timeout": 600000, "trust": true'"${1:+, \"env\": $1}"' } }
}' '[[rule]]
toolName = "run_shell_command"
decision = "deny"
priority = 900'
        }
        gemini_mcp_home
        serve "$(step '~run_command' '{"command": "echo m >mcp.txt"}')" "$(step '~run_command' "{\"command\": $(jstr "$DENY")}")"
        mark; GEMINI_ENV=GEMINI_CLI_TRUST_WORKSPACE=true gemini
        is "$(cat "$WS/mcp.txt" 2>/dev/null)" "m" "gemini mcp (trusted folder): run_command ran the allowed command"
        like "$(ntx)" " 1 committed;" "gemini mcp: ... as a committed transaction"
        ok "gemini mcp: the denied command did not run" test ! -e "$WS/denied.txt"
        like "$(told)" 'denied' "gemini mcp: ... the model got the refusal"
        serve "$(step '~run_command' '{"command": "echo crash >crash.txt"}')"
        gemini_mcp_home '{"TXBOX_FAILPOINT": "judge:0:segv"}'
        mark; GEMINI_ENV=GEMINI_CLI_TRUST_WORKSPACE=true gemini
        ok "gemini mcp: a judgement that crashes refuses the command" test ! -e "$WS/crash.txt"
        like "$(told)" "judgement-failed" "gemini mcp: ... naming judgement-failed"
        serve "$(step run_shell_command '{"command": "echo unguarded >unguarded.txt"}')"
        mark; gemini --skip-trust
        ok "gemini mcp (untrusted folder): no MCP, and the shell is refused by the policy, not run unguarded" \
                test ! -e "$WS/unguarded.txt"

        fi; if want gemini-edit; then
        # -- write_file and replace, BeforeTool and AfterTool in the user's settings --
        edit_ws gemini-edit
        gemini_home '{
  "security": { "auth": { "selectedType": "gemini-api-key" } },
  "hooks": {
    "BeforeTool": [
      { "matcher": "run_shell_command|write_file|replace", "hooks": [{ "type": "command", "command": "txbox hook gemini", "timeout": 30000 }] }
    ],
    "AfterTool": [
      { "matcher": "write_file|replace", "hooks": [{ "type": "command", "command": "txbox hook gemini", "timeout": 30000 }] }
    ]
  }
}'
        edit_before
        serve "$(step replace '{"file_path": "f.txt", "old_string": "two", "new_string": "TWO", "instruction": "capitalise"}')" \
                "$(step write_file "{\"file_path\": $(jstr "$WS/sub/new.txt"), \"content\": \"new\\n\"}")" \
                "$(step write_file "{\"file_path\": $(jstr "$WS/.txbox/policy"), \"content\": \"defaults: false\"}")"
        mark; GEMINI_ENV=GEMINI_CLI_TRUST_WORKSPACE=true gemini
        is "$(cat "$WS/f.txt")" "$(printf 'one\nTWO')" "gemini edit: replace ran"
        # (Gemini CLI keeps its tools out of .git/ by itself; .txbox/ is txbox's to guard)
        ok "gemini edit: a write_file of txbox's policy was refused" test ! -e "$WS/.txbox/policy"
        like "$(told)" "effect-protected-path" "gemini edit: ... and the model was told the rule"
        edit_checks gemini "gemini (replace f.txt|write_file sub/new.txt)" 3
        fi
else
        skip "Gemini CLI" "not installed or not chosen"
fi

# ================= MCP inspector (--cli) =================
if want inspector && [ -x "$INSPECTOR" ]; then
        newws inspector
        insp() { (cd "$WS" && timeout 120 "$INSPECTOR" --cli "$@" 2>"$T/insp.err"); }
        out=$(insp txbox -C "$WS" mcp --method tools/list)
        like "$out" '"name": ?"run_command"' "inspector: tools/list names run_command"
        like "$out" '"outputSchema"' "inspector: ... with an outputSchema"
        out=$(insp txbox -C "$WS" mcp --method tools/call --tool-name run_command --tool-arg 'command=echo i >insp.txt')
        like "$out" '"outcome": ?"committed"' "inspector: run_command commits"
        is "$(cat "$WS/insp.txt" 2>/dev/null)" "i" "inspector: ... the change is in the workspace"
        out=$(insp txbox -C "$WS" mcp --method tools/call --tool-name run_command --tool-arg "command=$DENY")
        like "$out" '"outcome": ?"denied"' "inspector: a denied command is refused"
        ok "inspector: ... and did not run" test ! -e "$WS/denied.txt"
        out=$(insp txbox -C "$WS" mcp --method tools/call --tool-name list_transactions --tool-arg 'limit=0')
        like "$out" '"isError": ?true' "inspector: an invalid argument is a tool error (isError), not a protocol error"
        like "$out" 'invalid arguments' "inspector: ... naming what is wrong"
        out=$(insp -e "$CRASH" txbox -C "$WS" mcp --method tools/call --tool-name run_command --tool-arg 'command=echo c >crash.txt')
        like "$out" 'judgement-failed' "inspector: a judgement that crashes refuses the command"
        ok "inspector: ... which did not run" test ! -e "$WS/crash.txt"
else
        skip "MCP inspector" "not installed or not chosen"
fi

# ================= the TypeScript SDK =================
if want sdk && [ -f "$T/sdk/node_modules/@modelcontextprotocol/sdk/package.json" ]; then
        newws sdk
        out=$(cd "$T" && node "$T/sdk/client.mjs" scenario txbox -C "$WS" mcp 2>"$T/sdk.err")
        get() { printf '%s\n' "$out" | sed -n "s/^$1=//p"; }
        is "$(get done)" "yes" "sdk: the scenario ran to its end $(get fatal)"
        is "$(get run.outcome)" "committed" "sdk: run_command commits"
        is "$(get deny.outcome)" "denied" "sdk: rm -rf ~ is refused"
        like "$(get err.wrong_type)" "^isError: invalid arguments" "sdk: a wrong argument type is a tool error (isError)"
        is "$(get outschemas)" "all" "sdk: every result validated against its outputSchema"
        like "$(get cancel.call)" "^rejected" "sdk: a cancelled call gets no answer"
        is "$(get cancel.outcome)" "rolled_back" "sdk: ... its command rolled back"
        is "$(get timeout.outcome)" "rolled_back" "sdk: a call that timed out on the client: cancelled and rolled back"
else
        skip "TypeScript SDK" "not installed or not chosen"
fi

echo "1..$_n"
[ "$_failed" -eq 0 ]
