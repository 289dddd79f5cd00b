#!/bin/bash
# The sandbox's view of the home: the tools' caches are writable, private to txbox, kept
# across transactions and never part of one; the credentials of tools and agents are hidden,
# and the hidden set is extensible; the rest of $HOME stays read-only.
. "$(dirname "$0")/lib.sh"

ROOT="$HOME/.cache/txbox/caches"
new_ws
before=$(tree_hash "$WS")

# ---- caches: mkdir ~/.cache/x persists, outside the workspace and any changeset ----
out=$(tx run -- sh -c 'mkdir -p ~/.cache/x && echo one >~/.cache/x/f && echo made' 2>&1); rc=$?
is "$rc" 0 "mkdir ~/.cache/x in the sandbox: exit 0"
like "$out" "made" "... it ran"
is "$(tx show --json "$(last_tx)" | grep -o '"changes": {[^}]*}')" '"changes": {"added": [], "modified": [], "deleted": []}' \
        "the cache write is no change of the transaction"
is "$(tree_hash "$WS")" "$before" "the workspace is untouched"
is "$(cat "$ROOT/.cache/x/f" 2>&1)" one "the file is in txbox's private cache root"
ok "the host's own ~/.cache has no x" test ! -e "$HOME/.cache/x"
is "$(tx run -- cat ~/.cache/x/f 2>&1)" one "a second transaction sees it"
out=$(tx run --commit=discard -- sh -c 'echo two >~/.cache/x/f' 2>&1)
is "$(cat "$ROOT/.cache/x/f")" two "a rolled-back transaction's cache writes stay (caches are not transactional)"
ok "the cache root is closed to other users" test "$(stat -c %a "$ROOT")" = 700

# ---- poisoning stays in the sandbox's caches ----
mkdir -p "$HOME/.cache/pip/wheels" "$HOME/.npm/_cacache"
echo host >"$HOME/.cache/pip/wheels/pkg.whl"
echo host >"$HOME/.npm/_cacache/index"
out=$(tx run -- sh -c 'cat ~/.cache/pip/wheels/pkg.whl 2>&1; mkdir -p ~/.cache/pip/wheels ~/.npm/_cacache;
        echo evil >~/.cache/pip/wheels/pkg.whl; echo evil >~/.npm/_cacache/index; echo wrote' 2>&1)
like "$out" "No such file" "the host's own pip cache is not visible inside"
like "$out" "wrote" "the sandbox writes its own caches"
is "$(cat "$HOME/.cache/pip/wheels/pkg.whl")" host "a poisoned wheel does not reach the host's pip cache"
is "$(cat "$HOME/.npm/_cacache/index")" host "... nor the host's npm cache"
is "$(cat "$ROOT/.npm/_cacache/index")" evil "it stays in txbox's own"

# ---- the rest of $HOME stays read-only, with the caches named nowhere else ----
echo '[user]' >"$HOME/.gitconfig"
out=$(tx run -- git config --global user.name agent 2>&1); rc=$?
ok "git config --global is refused (~/.gitconfig decides what git runs on the host)" test "$rc" -ne 0
is "$(cat "$HOME/.gitconfig")" "[user]" "~/.gitconfig unchanged"
out=$(tx run -- sh -c 'echo x >~/notes.txt' 2>&1); rc=$?
like "$out" "Read-only file system" "a file in the home outside the caches: read-only"
ok "... nothing written" test ! -e "$HOME/notes.txt"

# ---- tools: npm, pip ----
mkdir -p "$WS/pkg" && printf '{"name":"pkg","version":"1.0.0"}\n' >"$WS/pkg/package.json"
if command -v npm >/dev/null; then
        rm -rf "$HOME/.npm"
        out=$(cd "$WS/pkg" && tx run -- npm pack --silent 2>&1); rc=$?
        is "$rc" 0 "npm pack with no ~/.npm on the host: exit 0 (was ENOENT mkdir ~/.npm)"
        ok "npm pack's tarball is committed" test -f "$WS/pkg/pkg-1.0.0.tgz"
        ok "npm used ~/.cache/npm in the cache root" test -d "$ROOT/.cache/npm"
        ok "no ~/.npm was made on the host" test ! -e "$HOME/.npm"
        mkdir "$HOME/.npm"
        out=$(cd "$WS/pkg" && tx run -- sh -c 'npm pack --silent && ls -A ~/.npm' 2>&1); rc=$?
        is "$rc" 0 "npm pack with ~/.npm on the host: exit 0"
        is "$(ls -A "$HOME/.npm")" "" "the host's ~/.npm stays empty"
        ok "npm's cache is txbox's ~/.npm" test -n "$(ls -A "$ROOT/.npm")"
else
        for i in 1 2 3 4 5 6 7; do skip "npm pack" "no npm"; done
fi
if python3 -m pip --version >/dev/null 2>&1; then
        out=$(tx run -- python3 -m pip cache dir 2>&1); rc=$?
        is "$rc" 0 "pip cache dir: exit 0 (the cache is not disabled)"
        is "$out" "$HOME/.cache/pip" "pip's cache is ~/.cache/pip"
else
        for i in 1 2; do skip "pip cache" "no pip"; done
fi

# ---- switched off, listed, kept away from the workspace ----
out=$(TXBOX_CACHE=off tx run -- mkdir ~/.cache/y 2>&1); rc=$?
like "$out" "Read-only file system" "TXBOX_CACHE=off: ~/.cache is read-only"
printf 'sandbox:\n  caches: false\n' >"$T/nocache.yml"
out=$("$TXBOX" -C "$WS" --policy "$T/nocache.yml" run -- mkdir ~/.cache/y 2>&1)
like "$out" "Read-only file system" "sandbox: caches: false: ~/.cache is read-only"
mkdir -p "$HOME/.bazel-cache"
printf 'sandbox:\n  caches: ["~/.bazel-cache"]\n' >"$T/bazel.yml"
out=$("$TXBOX" -C "$WS" --policy "$T/bazel.yml" run -- sh -c 'touch ~/.bazel-cache/b && echo ok; touch ~/.cache/z' 2>&1)
like "$out" "^ok" "caches: [~/.bazel-cache]: that one is writable"
like "$out" "Read-only file system" "... and ~/.cache no longer (the list replaces the built-in one)"
ok "... in the cache root" test -f "$ROOT/.bazel-cache/b"
mkdir -p "$WS/.txbox" && printf 'sandbox:\n  caches: ["~/.bazel-cache"]\n' >"$WS/.txbox/policy"
out=$(tx run -- sh -c 'touch ~/.bazel-cache/c' 2>&1)
like "$out" "Read-only file system" "an untrusted workspace policy cannot make more of the home writable"
like "$(tx check -c 'true' 2>&1)" "list of sandbox caches do not apply" "... and check says why"
rm -rf "$WS/.txbox"

# A home that is the workspace: its caches are the workspace's, committed like any file.
out=$(HOME="$WS" tx run -- sh -c 'mkdir -p ~/.cache/w && echo w >~/.cache/w/f' 2>&1); rc=$?
is "$rc" 0 "home = workspace: exit 0"
is "$(cat "$WS/.cache/w/f" 2>&1)" w "... the write is the transaction's, committed into the workspace"
rm -rf "$WS/.cache"

out=$(tx doctor 2>&1)
like "$out" "writable caches, kept across transactions, never committed: $ROOT" "doctor names the cache root"
like "$out" "
  ~/\.cache +mounted" "doctor: ~/.cache mounted"
like "$out" "~/go/pkg/mod +its directory does not exist here; GOMODCACHE=~/.cache/go-mod instead" \
        "doctor: a tool sent to ~/.cache by its variable"
like "$(TXBOX_CACHE=off tx doctor 2>&1)" "writable caches: none: turned off \(TXBOX_CACHE=off\)" "doctor: off"
like "$(tx doctor --json)" '"home":\{"cache_root":"[^"]+","caches_off":null,"caches":\[\{"path":"~/\.cache","mounted":true' \
        "doctor --json: the caches"

# ---- hidden: the agents' credentials and the others ----
mkdir -p "$HOME/.claude" "$HOME/.gemini" "$HOME/.config/gh" "$T/dotfiles/codex" "$T/alt-claude" "$HOME/.mytool"
echo SECRET-claude >"$HOME/.claude/.credentials.json"
echo '{"primaryApiKey":"SECRET-claude-json"}' >"$HOME/.claude.json"
echo SECRET-gemini >"$HOME/.gemini/oauth_creds.json"
echo SECRET-gh >"$HOME/.config/gh/hosts.yml"
echo SECRET-aider >"$HOME/.aider.conf.yml"
echo SECRET-git >"$HOME/.git-credentials"
echo SECRET-hist >"$HOME/.bash_history"
echo SECRET-codex >"$T/dotfiles/codex/auth.json"
ln -s "$T/dotfiles/codex" "$HOME/.codex"                # a hidden directory that is a link
echo SECRET-link >"$T/dotfiles/npmrc"
ln -s "$T/dotfiles/npmrc" "$HOME/.npmrc"                # a hidden file that is a link
echo SECRET-alt >"$T/alt-claude/.credentials.json"
echo SECRET-kube1 >"$T/kube1" && echo SECRET-kube2 >"$T/kube2"
echo SECRET-sa >"$T/sa.json"
echo SECRET-mytool >"$HOME/.mytool/token"
echo SECRET-ws >"$WS/prod.env"
echo SECRET-env >"$T/envsecret"
files="~/.claude/.credentials.json ~/.claude.json ~/.gemini/oauth_creds.json ~/.config/gh/hosts.yml ~/.aider.conf.yml
~/.git-credentials ~/.bash_history ~/.codex/auth.json $T/dotfiles/codex/auth.json ~/.npmrc $T/dotfiles/npmrc
$T/alt-claude/.credentials.json $T/kube1 $T/kube2 $T/sa.json"
out=$(CLAUDE_CONFIG_DIR="$T/alt-claude" KUBECONFIG="$T/kube1:$T/kube2" GOOGLE_APPLICATION_CREDENTIALS="$T/sa.json" \
        tx run -- sh -c "cat $files 2>/dev/null; ls -A ~/.claude ~/.gemini ~/.codex; echo end" 2>&1)
like "$out" "end" "the reads ran"
if printf '%s' "$out" | grep -q SECRET; then
        ok "no credential is readable inside: $(printf '%s' "$out" | grep -o 'SECRET-[a-z0-9-]*' | tr '\n' ' ')" false
else
        ok "no credential is readable inside (agents', tools', linked, named by variables)" true
fi
is "$(printf '%s' "$out" | grep -v end | tr -d '\n')" "" "the hidden directories are empty"
printf 'sandbox:\n  hide: ["~/.mytool/token", "prod.env"]\n' >"$T/hide.yml"
out=$(TXBOX_HIDE="$T/envsecret" "$TXBOX" -C "$WS" --policy "$T/hide.yml" run -- \
        sh -c "cat ~/.mytool/token prod.env $T/envsecret 2>&1; echo end" 2>&1)
like "$out" "end" "extensible: the reads ran"
ok "the policy's hide list and TXBOX_HIDE hide more (a home path, a workspace file, any path)" \
        sh -c "! printf '%s' '$out' | grep -q SECRET"
is "$(tx run -- cat ~/.mytool/token 2>&1)" SECRET-mytool "without them, the same file is readable (the test can fail)"
mkdir -p "$WS/.txbox" && printf 'sandbox:\n  hide: ["~/.mytool"]\n' >"$WS/.txbox/policy"
out=$(tx run -- sh -c 'cat ~/.mytool/token; echo end' 2>&1)
ok "an untrusted workspace policy may hide more" sh -c "! printf '%s' '$out' | grep -q SECRET"
rm -rf "$WS/.txbox"
printf 'sandbox:\n  hide: ["%s"]\n' "$T" >"$T/hide-ws.yml"
out=$("$TXBOX" -C "$WS" --policy "$T/hide-ws.yml" run -- cat README 2>&1)
is "$out" hello "a hide path that holds the workspace does not hide the workspace"
like "$(tx doctor)" "hidden: [0-9]+ paths .*present here: .*~/\.claude, ~/\.claude\.json" \
        "doctor lists the hidden paths present here"
ok "the host's credentials are intact" test "$(cat "$HOME/.claude/.credentials.json")" = SECRET-claude

done_testing
