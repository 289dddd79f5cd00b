#!/bin/bash
# What a transaction leaves for the user's next command to run (effect-run-later): git
# configuration that names a program, hooks, VS Code tasks and settings, agent settings.
# Each attack is refused (123) and leaves nothing; the ordinary work next to it commits.
# Every command runs through txbox, inside the jail, against this test's throwaway tree.
. "$(dirname "$0")/lib.sh"

if ! command -v git >/dev/null 2>&1; then
        skip "effect-run-later" "git is not installed"
        done_testing
fi
export GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.com GIT_COMMITTER_NAME=t \
        GIT_COMMITTER_EMAIL=t@example.com
: >"$HOME/.gitconfig"
MARK="$T/ran-on-host"
# Programs the command check cannot see into: the attack class is any program that writes
# the file, not the redirection or chmod a command rule already refuses.
printf '#!/bin/sh\ncat "$1" >>"$2"\n' >"$T/bin/append-to"
printf '#!/bin/sh\nmkdir -p "$(dirname "$2")" && cat "$1" >"$2"\n' >"$T/bin/install-to"
chmod +x "$T/bin/append-to" "$T/bin/install-to"

repo() { # a fresh workspace holding a git repository with one commit
        new_ws
        git -C "$WS" init -q -b main && git -C "$WS" add -A && git -C "$WS" commit -qm init
}
state() { tree_hash "$WS"; find "$WS/.git" -path "$WS/.git/objects" -prune -o -type f -print0 2>/dev/null | sort -z | xargs -0 cat | sha256sum; }
refused() { # refused DESCRIPTION PATTERN COMMAND...: 123, the rule named, nothing committed
        local d=$1 pat=$2 before out rc
        shift 2
        before=$(state)
        out=$(tx run -- "$@" 2>&1)
        rc=$?
        is "$rc" 123 "$d: refused (123)"
        like "$out" "effect-run-later" "$d: the line names effect-run-later"
        [ -n "$pat" ] && like "$(tx show --json "$(last_tx)")" "$pat" "$d: the record says what it would run"
        is "$(state)" "$before" "$d: nothing of it committed"
}
commits() { # commits DESCRIPTION COMMAND...: 0, no violation
        local d=$1 out rc
        shift
        out=$(tx run -- "$@" 2>&1)
        rc=$?
        is "$rc" 0 "$d: commits"
        [ "$rc" -eq 0 ] || echo "# $out"
}

# ---- git configuration that runs a program ----
repo
refused "git config core.fsmonitor" "core.fsmonitor = 'touch [^']*ran-on-host'.*git status" \
        git config core.fsmonitor "touch $MARK"
git -C "$WS" status >/dev/null 2>&1
ok "... and the next git status on the host runs nothing" test ! -e "$MARK"
refused "git config core.pager" "core.pager" git config core.pager "sh -c 'touch $MARK'"
refused "git config alias.st '!cmd'" "alias.st = '!touch" git config alias.st "!touch $MARK"
refused "git config alias.st (git words that can start programs)" "alias.st" git config alias.st "difftool -y --extcmd=x"
refused "git config core.hooksPath" "core.hookspath = '.githooks'" git config core.hooksPath .githooks
refused "git config filter.x.clean" "filter.x.clean" git config filter.x.clean "touch $MARK"
refused "git config diff.x.textconv" "diff.x.textconv" git config diff.x.textconv "touch $MARK"
refused "git config credential.helper" "credential.helper" git config credential.helper "!touch $MARK"
refused "git config include.path" "include.path" git config include.path ../evil.cfg
refused "git config remote.origin.uploadpack" "remote.origin.uploadpack" git config remote.origin.uploadpack "touch $MARK"
refused "git config url.<ext::>.insteadOf" "insteadof" git config "url.ext::sh -c touch% $MARK.insteadOf" https://example.com/
refused "git config sequence.editor" "sequence.editor" git config sequence.editor "touch $MARK"
refused "git config --add of a second credential helper" "credential.helper = 'store'" sh -c 'git config --add credential.helper store'
ok "nothing ran on the host" test ! -e "$MARK"

# Written by hand, in every spelling git reads (the text on stdin: never through a pipe, whose
# subshell would lose the test's count of failures).
by_hand() { # by_hand DESCRIPTION PATTERN < TEXT: TEXT appended to .git/config by a program
        cat >"$T/add.cfg"
        refused "$1" "$2" "$T/bin/append-to" "$T/add.cfg" .git/config
}
by_hand "an [alias] appended by a program" "alias.x = '!touch" <<EOF
[alias]
	x = !touch $MARK
EOF
by_hand "a key on the header's line, in capitals" "core.fsmonitor" <<EOF
[CoRe] FsMonitor = touch $MARK
EOF
by_hand "a value continued over two lines" "core.pager = 'touch   [^ ']*ran-on-host'" <<EOF
[core]
	pager = touch \\
  $MARK
EOF
by_hand "a value in quotes, an escape, a comment after it" "core.editor = 'touch [^']*ran-on-host x[\\\\]+tx'" <<EOF
[core]
	editor = "touch $MARK x\\tx" ; a comment
EOF
by_hand "the old [section.sub] spelling" "diff.x.textconv" <<EOF
[diff.x]
	textconv = touch $MARK
EOF
by_hand "a quoted subsection with escapes" 'filter[.]a[\\]"b[.]smudge' <<EOF
[filter "a\\"b"]
	smudge = touch $MARK
EOF
by_hand "CRLF lines" "core.pager" < <(printf '[core]\r\n\tpager = touch %s\r\n' "$MARK")
by_hand "[core] again after subsections of core, with a comment and quotes" "core.fsmonitor" <<EOF
[core "x"]
	fsmonitor = inert
[core.y]
	editor = inert
# a comment
[core]
	fsMonitor = "touch $MARK"
EOF
# Subsections of core hold no key git reads ([core "x"] fsmonitor is core.x.fsmonitor): by
# their consequence, nothing runs, and such a file commits.
printf '[core "x"]\n\tfsmonitor = touch %s\n[core.y]\n\tpager = touch %s\n' "$MARK" "$MARK" >"$T/add.cfg"
commits "[core \"x\"] fsmonitor and [core.y] pager, which git never reads as core keys" \
        "$T/bin/append-to" "$T/add.cfg" .git/config
is "$(git -C "$WS" config --get core.fsmonitor; git -C "$WS" config --get core.pager)" "" \
        "... git itself finds no core.fsmonitor or core.pager there"
git -C "$WS" status >/dev/null 2>&1
ok "... and its next git status runs nothing" test ! -e "$MARK"
by_hand "a NUL byte in the configuration" "cannot be judged" < <(printf '[core]\n\tpager = less\0; touch %s\n' "$MARK")
by_hand "a configuration git would refuse" "cannot be judged" <<EOF
[core
	pager = touch $MARK
EOF
by_hand "a line of a megabyte" "cannot be judged" < <(printf '[core]\n\tpager = touch %s #' "$MARK"
        head -c 1100000 /dev/zero | tr '\0' x; echo)

# Includes: the included file is judged as part of the configuration.
repo
git -C "$WS" config include.path ../shared.gitconfig # the user's own include of a project file
printf '[user]\n\tname = t\n' >"$WS/shared.gitconfig"
commits "editing an included file without programs" sh -c 'printf "[color]\n\tui = auto\n" >>shared.gitconfig'
printf '[core]\n\tfsmonitor = touch %s\n' "$MARK" >"$T/fsm.cfg"
refused "an included file that gains core.fsmonitor" "core.fsmonitor" "$T/bin/append-to" "$T/fsm.cfg" shared.gitconfig
refused "an include that leads through a link" "core.fsmonitor" \
        sh -c "mkdir -p d && cp '$T/fsm.cfg' d/real && rm shared.gitconfig && ln -s d/real shared.gitconfig"
git config -f "$WS/.git/config" --unset include.path
printf '[include]\n\tpath = b.cfg\n' >"$WS/a.cfg"
printf '[include]\n\tpath = a.cfg\n' >"$WS/b.cfg"
git -C "$WS" config include.path ../a.cfg
refused "an include cycle that gains a program" "" "$T/bin/append-to" "$T/fsm.cfg" b.cfg
git config -f "$WS/.git/config" --unset include.path

# A nested repository and a bare one: the user cd's there and runs git.
repo
refused "a new nested repository with core.fsmonitor" "sub/.git/config" \
        sh -c "git init -q sub && git -C sub config core.fsmonitor 'touch $MARK'"
refused "a bare repository made by hand" "core.fsmonitor" \
        sh -c "mkdir -p b/objects b/refs && echo 'ref: refs/heads/main' >b/HEAD && cp '$T/fsm.cfg' b/config"

# ---- hooks ----
repo
printf '#!/bin/sh\ntouch %s\n' "$MARK" >"$T/hook"
refused "a hook written into .git/hooks by a program" "the git hook" "$T/bin/install-to" "$T/hook" .git/hooks/pre-commit
refused "a hook of a nested repository" "the git hook" "$T/bin/install-to" "$T/hook" src/.git/hooks/post-checkout
git -C "$WS" config core.hooksPath .githooks # the user's own choice
refused "a hook in the directory core.hooksPath names" "hooks directory core.hooksPath names" \
        "$T/bin/install-to" "$T/hook" .githooks/pre-commit
git -C "$WS" config --unset core.hooksPath
commits "git init makes only sample hooks" git init -q nested
commits "a directory called hooks elsewhere (React)" "$T/bin/install-to" "$T/hook" src/hooks/useThing.js
git -C "$WS" commit -qm "x" --allow-empty
ok "no hook ran on the host" test ! -e "$MARK"

# ---- ordinary git work commits ----
repo
commits "git config user.name" git config user.name "A Developer"
commits "git config core.autocrlf" git config core.autocrlf input
commits "git remote add" git remote add origin https://example.com/r.git
commits "git branch --set-upstream-to" sh -c 'git update-ref refs/remotes/origin/main HEAD && git branch --set-upstream-to=origin/main'
commits "git commit" sh -c 'echo more >>README && git commit -qam more'
commits "git switch -c, and back" sh -c 'git switch -qc feature && git switch -q main'
commits "git pack-refs" git pack-refs --all
commits "git clone of a local repository" git clone -q --no-hardlinks .git clone
commits "git worktree add (a linked worktree reads the same configuration)" git worktree add -q --no-checkout wt2
git -C "$WS" config core.pager "less -R" # the user's own pager
commits "ordinary work beside a pager the user set" git config user.email dev@example.com
commits "the configuration rewritten, the user's pager kept" git config --unset user.email
commits "a second worktree beside the user's pager" git worktree add -q --no-checkout wt3

# ---- the user allows one change: an approval program (--approve) is asked ----
repo
printf '#!/bin/sh\ncat >"%s/asked.json"\necho allow\n' "$T" >"$T/yes.sh"
printf '#!/bin/sh\necho deny\n' >"$T/no.sh"
chmod +x "$T/yes.sh" "$T/no.sh"
"$TXBOX" -C "$WS" --approve "$T/no.sh" run -- git config core.pager "less -S" >/dev/null 2>&1
is "$?" 123 "an approval program that answers deny: refused"
"$TXBOX" -C "$WS" --approve "$T/yes.sh" run -- git config core.pager "less -S" >/dev/null 2>&1
is "$?" 0 "an approval program that answers allow: committed"
is "$(git -C "$WS" config core.pager)" "less -S" "... the pager is set"
like "$(cat "$T/asked.json")" '"decision":"ask","rule":"effect-run-later","reason":"[.]git/config: sets git config core.pager' \
        "... it was asked with the key and the value"
echo "TOKEN=1" >"$WS/.env"
printf '#!/bin/sh\necho TOKEN=2 >>.env\n' >"$T/bin/change-settings" && chmod +x "$T/bin/change-settings"
out=$("$TXBOX" -C "$WS" --approve "$T/yes.sh" run -- sh -c "git config core.editor vi && '$T/bin/change-settings'" 2>&1)
is "$?" 123 "an allowed change beside a broken rule of another kind (.env rewritten): still refused"
like "$out" "effect-protected-path" "... naming that rule"

# ---- editors and agents ----
new_ws
mkdir -p "$WS/.vscode"
cat >"$T/tasks.json" <<'EOF'
// VS Code tasks, with comments and trailing commas as VS Code allows
{
  "version": "2.0.0",
  "tasks": [
    { "label": "build", "type": "shell", "command": "make", },
    { "label": "setup", "type": "shell", "command": "touch /tmp/x",
      "runOptions": { "runOn": "folderOpen" } },
  ],
}
EOF
refused "a VS Code task that runs when the folder opens" "task setup" cp "$T/tasks.json" .vscode/tasks.json
printf '{ "version": "2.0.0", "tasks": [ { "label": "build", "type": "shell", "command": "make" } ] }\n' >"$T/tasks2.json"
commits "a VS Code task that runs when asked" cp "$T/tasks2.json" .vscode/tasks.json
printf '{\n  "editor.tabSize": 4,\n  "files.exclude": { "**/*.o": true },\n}\n' >"$T/settings.json"
commits "VS Code editor settings" cp "$T/settings.json" .vscode/settings.json
printf '{ "editor.tabSize": 2, "python.defaultInterpreterPath": "./tools/evil" }\n' >"$T/settings2.json"
refused "a VS Code setting that names a program" "python.defaultInterpreterPath" cp "$T/settings2.json" .vscode/settings.json
mkdir -p "$T/agent/.claude"
printf '{ "hooks": { "SessionStart": [ { "hooks": [ { "type": "command", "command": "touch /tmp/x" } ] } ] } }\n' >"$T/agent/.claude/settings.json"
refused "a coding agent's settings (hooks run at its next start)" "settings of a coding agent" cp -r "$T/agent/.claude" .
commits "an .envrc (direnv asks before it runs a changed one)" sh -c 'echo "export A=1" >.envrc'
commits "a Makefile and a package.json script (run when the user runs them)" \
        sh -c 'printf "all:\n\ttrue\n" >Makefile && echo "{\"scripts\": {\"test\": \"true\"}}" >package.json'

# ---- package installs ----
new_ws
if python3 -c 'import venv, ensurepip, setuptools, wheel' 2>/dev/null; then
        mkdir -p "$WS/pkg/demo"
        printf '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n[project]\nname = "demo"\nversion = "1.0"\n' >"$WS/pkg/pyproject.toml"
        : >"$WS/pkg/demo/__init__.py"
        commits "python3 -m venv, then pip install -e of a local package (writes a .pth)" sh -c \
                'python3 -m venv --system-site-packages .venv && .venv/bin/pip install -q --no-index --no-build-isolation -e ./pkg'
        ok "... the .pth is there" sh -c "ls '$WS'/.venv/lib/python3*/site-packages/*.pth >/dev/null 2>&1"
        is "$(cd "$T" && "$WS/.venv/bin/python" -c 'import demo; print("ok")')" ok "... and the package imports"
elif python3 -c 'import venv, ensurepip' 2>/dev/null; then
        # No wheel here for pip install -e to build with: what it writes, written the same way.
        commits "python3 -m venv, then a .pth with an import line in its site-packages (as pip install -e writes)" \
                sh -c 'python3 -m venv .venv && mkdir -p src/demo && : >src/demo/__init__.py &&
                       d=$(echo .venv/lib/python3*/site-packages) &&
                       printf "import sys; sys.path.insert(0, \"%s/src\")\n" "$PWD" >"$d/__editable__.demo-1.0.pth"'
        is "$(cd "$T" && "$WS/.venv/bin/python" -c 'import demo; print("ok")')" ok "... and the package imports through it"
else
        skip "pip install -e" "python3 without venv or ensurepip"
fi
if command -v npm >/dev/null 2>&1; then
        mkdir -p "$WS/lib/leftpad"
        printf '{"name": "leftpad", "version": "1.0.0", "main": "index.js"}\n' >"$WS/lib/leftpad/package.json"
        printf 'module.exports = (s) => s;\n' >"$WS/lib/leftpad/index.js"
        printf '{"name": "app", "version": "1.0.0", "dependencies": {"leftpad": "file:lib/leftpad"}}\n' >"$WS/package.json"
        commits "npm install of a local package" npm install --offline --no-audit --no-fund --silent
        ok "... installed" test -e "$WS/node_modules/leftpad/package.json"
else
        skip "npm install" "npm not installed"
fi

done_testing
