#!/bin/bash
# txbox prefix / txbox-prefix: Claude Code's CLAUDE_CODE_SHELL_PREFIX.  One argument, the
# command string: a transaction, with Claude Code's cwd record ("&& pwd -P >| FILE") kept
# working; txbox's own hook and MCP starts, and the user's listed strings, pass through; a
# string that merely looks like one of those is a transaction.  (tests/clients/ drives the
# real Claude Code through it.)
. "$(dirname "$0")/lib.sh"

new_ws
mkdir -p "$WS/.git" "$WS/sub"
PFX="$T/bin/txbox-prefix"
ln -sf txbox "$PFX"
export TMPDIR="$T/tmp"
ntx() { tx log --json -n 1000 | grep -o '"tx":' | wc -l; }
# Claude Code's form: snapshot, eval of the model's command, cwd record.
claude() { # claude MODEL-COMMAND CWD-FILE
        printf "source %s 2>/dev/null || true && eval %s < /dev/null && pwd -P >| %s" "$HOME/none.sh" \
                "'$(printf '%s' "$1" | sed "s/'/'\\\\''/g")'" "$2"
}

# ---- a command string is one transaction; the cwd record survives the sandbox ----
cwdf="$TMPDIR/claude-1a2b-cwd"
rm -f "$cwdf"
before=$(ntx)
out=$(cd "$WS" && "$PFX" "$(claude 'cd sub && echo one >one.txt && echo out' "$cwdf")" 2>"$T/err")
is "$?" 0 "a command string runs (exit 0)"
is "$out" "out" "its stdout passes through"
is "$(cat "$WS/sub/one.txt" 2>/dev/null)" "one" "its change is committed"
is "$(ntx)" "$((before + 1))" "as one transaction"
is "$(cat "$cwdf" 2>/dev/null)" "$WS/sub" "Claude Code's cwd file (under \$TMPDIR) names the directory the command ended in"
like "$(tx log --json -n 1)" '"argv": \["/bin/(ba|z)?sh", "-c", "source .*cd sub && echo one.* && pwd -P >&0"\]' \
        "the log shows the string, its cwd record sent to txbox instead of a file"
# from the subdirectory, the workspace is still the project (the nearest .git up)
out=$(cd "$WS/sub" && "$PFX" "$(claude 'pwd; echo two >two.txt' "$cwdf")" 2>&1)
is "$out" "$WS/sub" "the next command starts where the last one ended"
is "$(ntx)" "$((before + 2))" "... in the same workspace (found from the subdirectory)"
rm -f "$cwdf"
(cd "$WS" && "$PFX" "$(claude 'cd sub && false' "$cwdf")" >/dev/null 2>&1)
is "$?" 1 "a failing command keeps its status"
ok "... and writes no cwd record (as with Claude Code's &&)" test ! -e "$cwdf"
(cd "$WS" && "$PFX" "$(claude 'cd /usr' "$cwdf")" >/dev/null 2>&1)
ok "a directory outside the workspace is not recorded" test ! -e "$cwdf"
(cd "$WS" && "$PFX" "$(claude 'cd sub; printf "%s\n" /etc >&0; true' "$cwdf")" >/dev/null 2>&1)
ok "nor one the program forged on the pipe: the shell's own last line wins ($(cat "$cwdf" 2>/dev/null))" \
        test "$(cat "$cwdf" 2>/dev/null)" = "$WS/sub"
rm -f "$cwdf"
# TMPDIR unset: Claude Code writes under /tmp (writable in the user jail only)
if [ "$JAIL_MODE" = user ]; then
        f=/tmp/claude-c0ffee-cwd
        rm -f "$f"
        (cd "$WS" && env -u TMPDIR "$PFX" "$(claude 'cd sub' "$f")" >/dev/null 2>&1)
        is "$(cat "$f" 2>/dev/null)" "$WS/sub" "with TMPDIR unset, the record goes to /tmp"
else
        skip "with TMPDIR unset, the record goes to /tmp" "/tmp is read-only in the root jail"
fi
# a record file elsewhere is no record: the string runs as it is, and cannot write there
out=$(cd "$WS" && "$PFX" "$(claude 'true' "$T/claude-1a2b-cwd")" 2>&1)
ok "a record path outside \$TMPDIR and /tmp is not written by txbox" test ! -e "$T/claude-1a2b-cwd"

# ---- refused and rolled back as txbox sh would ----
orig=$(tree_hash "$WS")
(cd "$WS" && "$PFX" "$(claude 'git push --force origin main' "$cwdf")" >/dev/null 2>"$T/err")
is "$?" 126 "a command the policy forbids is refused (126)"
like "$(cat "$T/err")" '^txbox: denied by rule git-push-force' "with the rule on stderr"
(cd "$WS" && "$PFX" "$(claude 'echo x >x.txt; exit 3' "$cwdf")" >/dev/null 2>&1)
is "$?" 3 "a failing command: its status"
is "$(tree_hash "$WS")" "$orig" "... and its changes rolled back"

# ---- pass-through: txbox's own hook and MCP server, and the user's exact strings ----
before=$(ntx)
ev='{"tool_name":"Bash","tool_input":{"command":"rm -rf ~"},"cwd":"'"$WS"'"}'
out=$(cd "$WS" && printf '%s' "$ev" | "$PFX" "txbox hook claude-code")
like "$out" '"permissionDecision":"deny"' "'txbox hook claude-code' passes through: the hook answers on stdout"
out=$(cd "$WS" && printf '%s' "$ev" | "$PFX" "$T/bin/txbox -C $WS hook codex")
like "$out" '"permissionDecision":"deny"' "... so does the absolute path of this txbox, with -C"
init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
out=$(cd "$WS" && echo "$init" | "$PFX" "txbox mcp")
like "$out" '"serverInfo": \{"name": "txbox"' "'txbox mcp' passes through: the MCP server answers"
is "$(ntx)" "$before" "none of them was a transaction"
export TXBOX_PREFIX_PASS="echo user-hook >\"$T/passed\"
other line"
(cd "$WS" && "$PFX" "echo user-hook >\"$T/passed\"")
is "$(cat "$T/passed" 2>/dev/null)" "user-hook" "a line of TXBOX_PREFIX_PASS passes through (it wrote outside the workspace)"
is "$(ntx)" "$before" "... not as a transaction"

# Look-alikes are transactions: their effects are judged and stay in the workspace.
mkdir -p "$T/fake" && printf '#!/bin/sh\necho fake >"%s/fake-ran"\n' "$T" >"$T/fake/txbox" && chmod +x "$T/fake/txbox"
for s in "txbox hook claude-code; echo pwned >\"$T/pwned\"" "txbox mcp && echo pwned >\"$T/pwned\"" \
        "'txbox' hook claude-code" "txbox  mcp" "txbox hook claude-code x" "txbox hook cursor" \
        "$T/fake/txbox mcp" "txbox run -- sh -c 'echo pwned >$T/pwned'" \
        "echo user-hook >\"$T/passed\" ; echo pwned >\"$T/pwned\""; do
        n0=$(ntx)
        (cd "$WS" && "$PFX" "$s" </dev/null >/dev/null 2>&1)
        is "$(ntx)" "$((n0 + 1))" "a look-alike is a transaction: $s"
done
ok "none of them wrote outside the workspace" test ! -e "$T/pwned" -a ! -e "$T/fake-ran"
unset TXBOX_PREFIX_PASS

# ---- options: TXBOX_PREFIX_OPTIONS, and txbox prefix as a verb ----
mkdir -p "$T/other/.git"
out=$(cd "$T/other" && TXBOX_PREFIX_OPTIONS="--workspace=$WS --commit=discard" "$PFX" "pwd; echo d >d.txt" 2>&1)
is "$out" "$WS" "TXBOX_PREFIX_OPTIONS --workspace: the command runs in the workspace it names ..."
ok "... and its other options apply (--commit=discard rolled it back)" test ! -e "$WS/d.txt" -a ! -e "$T/other/d.txt"
like "$(tx log --json -n 1)" '"outcome": "(rolled_back|committed)"' "... and the transaction is in that workspace's log"
(cd "$WS" && "$T/bin/txbox" prefix --commit=discard "echo v >v.txt")
ok "txbox prefix (the verb) takes run options; --commit=discard rolled it back" test ! -e "$WS/v.txt"
"$T/bin/txbox" prefix a b >/dev/null 2>"$T/err"
is "$?" 125 "more than one argument: a usage error"
like "$(cat "$T/err")" "expected one argument" "... saying so"

done_testing
