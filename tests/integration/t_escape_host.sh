#!/bin/bash
# Escape suite, txbox's own hands: what txbox does as the user, outside the sandbox, with
# what the program left behind (its layer, the committed workspace, the names and bytes in
# them) or was handed (hook events).  Each attack must change nothing and reveal nothing
# outside the workspace.  The policy is out of the way where the sandbox or the commit
# itself must hold (txa: a policy that allows everything).
. "$(dirname "$0")/lib.sh"

printf 'version: 1\ndefaults: false\nrules: []\n' >"$T/allow-all.yml"
txa() { "$TXBOX" -C "$WS" --policy "$T/allow-all.yml" "$@"; }
mkdir -p "$HOME/.ssh" "$T/victimdir"
echo SECRET-KEY-0451 >"$HOME/.ssh/id_rsa"
echo keep >"$T/victimdir/a"
outside() { tree_hash "$T/victimdir"; cat "$HOME/.ssh/id_rsa"; }
base=$(outside)
init='{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}'
mcp_show() { # TX: the show_transaction result
        printf '%s\n%s\n{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"show_transaction","arguments":{"tx":"%s"}}}\n' \
                "$init" '{"jsonrpc":"2.0","method":"notifications/initialized"}' "$1" | "$TXBOX" -C "$WS" mcp 2>&1
}
secret_in() { printf '%s' "$1" | grep -q SECRET-KEY; }

# ---- 1. host-side reads never follow the program's symlinks ----
new_ws
txa run -- sh -c 'mkdir d && echo mine >d/id_rsa && echo one >f' >/dev/null 2>&1
committed=$(last_tx)
txa run --commit=keep -- sh -c 'echo two >>d/id_rsa && echo more >f' >/dev/null 2>&1
pending=$(last_tx)
# The directory becomes a link into the credentials, as a bypass of the effect rules would
# leave it (or a user's own link would).
rm -rf "$WS/d" && ln -s "$HOME/.ssh" "$WS/d"
for t in "$committed" "$pending"; do
        out=$(tx diff "$t" 2>&1)
        ok "txbox diff of a $([ "$t" = "$committed" ] && echo committed || echo pending) tx does not follow a link into the secrets" \
                eval '! secret_in "$out"'
        like "$out" "^--- a/f" "... and still shows the files it can"
        ok "txbox show does not reveal the secret" eval '! secret_in "$(tx show "$t" 2>&1; tx show --json "$t" 2>&1)"'
        ok "MCP show_transaction does not reveal the secret" eval '! secret_in "$(mcp_show "$t")"'
done
ok "txbox report --html does not reveal the secret" eval '! secret_in "$(tx report --html - 2>&1)"'
# The layer itself: a link in the pending tx's upper layer where the record names a file.
txa rollback "$pending" >/dev/null 2>&1
rm -f "$WS/d"
txa run --commit=keep -- sh -c 'mkdir e && echo x >e/id_rsa' >/dev/null 2>&1
p2=$(last_tx)
up=$(find "$HOME/.local/state/txbox" -path "*/tx/$p2/upper" -type d 2>/dev/null)
rm -rf "$up/e" && ln -s "$HOME/.ssh" "$up/e"
ok "a link swapped into a pending layer is not followed by diff" eval '! secret_in "$(tx diff "$p2" 2>&1)"'
ok "... nor by MCP show_transaction" eval '! secret_in "$(mcp_show "$p2")"'
mkfifo "$up/fifo" 2>/dev/null && rm -rf "$up/e" && mkdir "$up/e" && mv "$up/fifo" "$up/e/id_rsa"
ok "a fifo where a file was does not block diff" timeout 10 "$TXBOX" -C "$WS" diff "$p2"
txa rollback "$p2" >/dev/null 2>&1
is "$(outside)" "$base" "nothing outside changed"

# ---- 2. symlinks leaving the workspace are followed, not read lexically ----
new_ws
escapes() { # DESCRIPTION COMMAND: the command's links must not be committed
        local before after
        before=$(tree_hash "$WS")
        txa run -- sh -c "$2" >/dev/null 2>&1
        is "$?" 123 "$1: rolled back by the effect rule"
        after=$(tree_hash "$WS")
        is "$after" "$before" "$1: the workspace is unchanged"
}
escapes "absolute target with .. after the workspace" "ln -s '$WS/../victimdir' out"
escapes "absolute target through the workspace and back up" "ln -s '$WS/src/../../victimdir/a' out"
escapes "relative target climbing out" "ln -s ../victimdir out"
escapes "relative target climbing out of a subdirectory" "ln -s ../../victimdir src/out"
escapes "a name, then .. (a later commit could make the name a link)" "ln -s src/../README out"
escapes "through a link made in the same command" "ln -s .. up && ln -s up/victimdir out"
escapes "a chain of links in the same command" "ln -s .. a && ln -s a b && ln -s b/victimdir/a out"
txa run -- ln -s . here >/dev/null 2>&1
is "$(readlink "$WS/here")" "." "a link to the workspace root itself is fine"
escapes "through a committed link to the root" "ln -s here/../victimdir out"
ln -s "$T/victimdir" "$WS/userlink"
escapes "through a link the user made to the outside" "ln -s userlink/a out"
escapes "a loop (cannot be judged: refused)" "ln -s l1 l2 && ln -s l2 l1"
txa run -- sh -c 'mkdir -p x/y && ln -s ../../README x/y/r && ln -s x/y/r r2 && ln -s docs/a.txt a2' >/dev/null 2>&1
is "$?" 0 "links that stay inside are committed"
is "$(cat "$WS/r2" "$WS/a2" | head -1)" "hello" "... and lead where they say"
rm -f "$WS/userlink"
is "$(outside)" "$base" "nothing outside changed"

# ---- 5. the state dir is hidden whatever its path looks like ----
new_ws
real="$T/realstate"
rm -rf "$real" "$HOME/.local/state/txbox" && mkdir -p "$real" "$HOME/.local/state"
ln -s "$real" "$HOME/.local/state/txbox"
tx run -- true >/dev/null 2>&1
ok "the state root behind a link is used" test -n "$(ls -A "$real")"
leaf=$(ls "$real" | grep "^ws-")
out=$(txa run -- sh -c "ls -A '$real' '$HOME/.local/state/txbox/'; cat '$real/$leaf/audit.db' 2>/dev/null | head -c 16; find '$real' -name upper" 2>&1)
ok "the state dir is empty inside, through its link or its real path" \
        eval '! printf "%s" "$out" | grep -qE "$leaf|SQLite|/upper"'
txa run -- sh -c "touch '$real/x'" >/dev/null 2>&1
ok "... and cannot be written" test ! -e "$real/x"
mkdir -p "$T/dotfiles/ssh" && echo SECRET-KEY-LINKED >"$T/dotfiles/ssh/id_ed25519"
mv "$HOME/.ssh" "$T/ssh.real" && ln -s "$T/dotfiles/ssh" "$HOME/.ssh"
out=$(txa run -- sh -c "cat '$HOME/.ssh/id_ed25519' '$T/dotfiles/ssh/id_ed25519'" 2>&1)
ok "a secret directory that is a link is masked where it leads" eval '! secret_in "$out"'
rm -f "$HOME/.ssh" "$HOME/.local/state/txbox" && mv "$T/ssh.real" "$HOME/.ssh"
is "$(outside)" "$base" "nothing outside changed"

# ---- 7. a directory's mode never blocks a later commit, an undo or a recovery ----
new_ws
txa run -- sh -c 'mkdir ro && echo a >ro/a && chmod 555 ro' >/dev/null 2>&1
is "$(stat -c %a "$WS/ro")" 555 "a commit made a directory read-only"
txa run -- sh -c 'chmod 755 ro && echo b >ro/b' >/dev/null 2>&1
is "$?" 0 "a later command that makes it writable again and writes into it commits"
is "$(cat "$WS/ro/b" 2>/dev/null) $(stat -c %a "$WS/ro")" "b 755" "... with its file and its mode"
txa run -- sh -c 'echo c >ro/c && rm ro/a && chmod 500 ro' >/dev/null 2>&1
is "$?" 0 "writing into a directory and then closing it commits"
is "$(ls "$WS/ro" | tr '\n' ' ')$(stat -c %a "$WS/ro")" "b c 500" "... the mode comes after the files"
txa run -- sh -c 'mkdir -p p/q && echo x >p/q/f' >/dev/null 2>&1
txa run -- sh -c 'echo y >p/q/g && chmod 500 p/q && chmod 500 p' >/dev/null 2>&1
is "$?" 0 "nested directories closed children first"
is "$(stat -c %a "$WS/p" "$WS/p/q" | tr '\n' ' ')" "500 500 " "... both closed"
txa run -- sh -c 'chmod 700 ro && echo d >ro/d && chmod 500 ro' >/dev/null 2>&1
is "$?" 0 "writing into a closed directory that the command opens and closes again commits"
is "$(ls "$WS/ro" | tr '\n' ' ')$(stat -c %a "$WS/ro")" "b c d 500" "... and leaves it closed"
for i in 1 2 3 4 5 6; do txa undo >/dev/null 2>&1 || echo "# undo $i failed"; done
ok "every one of them undoes, newest first" test ! -e "$WS/ro" -a ! -e "$WS/p"
txa run -- sh -c 'mkdir -p z/y && echo x >z/y/f' >/dev/null 2>&1
txa run -- sh -c 'echo w >z/y/g && chmod 000 z/y && chmod 000 z' >/dev/null 2>&1
is "$?" 0 "directories closed to everyone (000) commit"
is "$(stat -c %a "$WS/z")" 0 "... closed"
is "$(txa undo >/dev/null 2>&1; echo $?) $(ls "$WS/z/y" 2>&1 | tr '\n' ' ')" "0 f " "... and undo opens them again"
txa undo >/dev/null 2>&1
# Recovery replays the same steps: a crash in the middle of such a commit.
txa run -- sh -c 'mkdir ro && echo a >ro/a && chmod 555 ro' >/dev/null 2>&1
(TXBOX_FAILPOINT=commit:2 "$TXBOX_HOOKS" -C "$WS" --policy "$T/allow-all.yml" run -- sh -c 'chmod 755 ro && echo b >ro/b') >/dev/null 2>&1
txa recover >/dev/null 2>&1
is "$(cat "$WS/ro/b" 2>/dev/null) $(stat -c %a "$WS/ro")" "b 755" "a commit interrupted between the modes is completed by recovery"
chmod -R u+rwX "$WS"

# ---- 6. undo takes away only what the transaction made, at every depth ----
new_ws
mk() { txa run -- sh -c 'mkdir -p d/s && echo a >d/a && echo b >d/s/b && ln -s a d/l' >/dev/null 2>&1; }
undo_refuses() { # DESCRIPTION PATH-NAMED
        local out
        out=$(txa undo 2>&1)
        is "$?" 1 "$1: undo refuses"
        like "$out" "$2" "... naming the path"
        ok "... and the directory stays" test -d "$WS/d/s"
}
mk && echo mine >"$WS/d/s/handmade"
undo_refuses "a file written by hand inside a directory the transaction made" "d/s/handmade"
is "$(cat "$WS/d/s/handmade")" "mine" "... and the hand-made file is intact"
rm -rf "$WS/d" && txa undo >/dev/null 2>&1 # (refused: d is gone; the log keeps it)
mk && echo more >>"$WS/d/s/b"
undo_refuses "a file changed by hand two levels down" "d/s/b"
rm -rf "$WS/d"
mk && rm "$WS/d/s/b"
undo_refuses "a file deleted by hand inside" "d/s/b"
rm -rf "$WS/d"
mk && mkdir "$WS/d/s/t"
undo_refuses "a directory made by hand inside" "d/s/t"
rm -rf "$WS/d"
mk && chmod 700 "$WS/d/s"
undo_refuses "a mode changed by hand inside" "d/s"
rm -rf "$WS/d"
mk && ln -sfn b "$WS/d/l"
undo_refuses "a link replaced by hand inside" "d/l"
rm -rf "$WS/d"
mk
is "$(txa undo >/dev/null 2>&1; echo $?)" 0 "a directory as the transaction left it is undone"
ok "... and is gone" test ! -e "$WS/d"
# A directory replacing one that was there (the same checks, on the replacement).
txa run -- sh -c 'rm -rf docs && mkdir docs && echo new >docs/n' >/dev/null 2>&1
echo mine >"$WS/docs/handmade"
out=$(txa undo 2>&1)
like "$out" "docs/handmade" "undo of a replaced directory refuses when a file was added by hand"
rm "$WS/docs/handmade"
is "$(txa undo >/dev/null 2>&1; echo $?) $(ls "$WS/docs" | tr '\n' ' ')" "0 a.txt b.txt " "... and undoes once it is gone"

# ---- 8. names, commands and content cannot write control sequences to the terminal ----
new_ws
raw() { LC_ALL=C grep -c "$(printf '[\001-\010\013-\037\177]')" <<<"$1"; } # lines with a control byte (not \t \n)
evil=$(printf 'e\033]0;TITLE\007v\033[2K\rforged\001\177\302\233x') # OSC title, erase line, CR, C1 CSI
nl=$(printf 'two\nlines')
txa run -- sh -c 'printf "%s\n" "$1" >"$1" && printf "x\n" >"$2" && printf "\033[31mred\033]52;c;cGFzdGU=\007\rover\n" >content' \
        sh "$evil" "$nl" >/dev/null 2>&1
t8=$(last_tx)
ok "the names were committed as they are" test -e "$WS/$evil" -a -e "$WS/$nl"
for v in "log" "show $t8" "diff $t8" "report" "report --html -"; do
        out=$(tx $v 2>&1)
        is "$(raw "$out")" 0 "txbox $v writes no control byte"
done
like "$(tx show "$t8")" 'e\\x1b\]0;TITLE\\x07v\\x1b\[2K\\rforged\\x01\\x7f\\u009bx' "... names are shown escaped, visibly"
is "$(tx show "$t8" | grep -c '^  + ')" 3 "... one line per changed path (a newline in a name makes none)"
like "$(tx diff "$t8")" 'red\\x1b\]52;c;cGFzdGU=\\x07\\rover' "... and content shown escaped in the diff"
is "$(tx diff "$t8" | grep -c '^+++ ')" 3 "... one label line per file"
# The txbox: lines: a refusal quoting the command, a rollback naming the path.
out=$(tx run -- sh -c "$(printf 'rm -rf ~ # \033[2K\r\033]0;x\007')" 2>&1)
is "$(raw "$out")" 0 "a refusal's txbox: line writes no control byte"
like "$out" '^txbox: denied .*\\x1b\[2K\\r' "... and shows the command escaped"
out=$(txa run -- sh -c 'mkfifo "$1"' sh "$evil" 2>&1)
is "$(raw "$out") $(printf '%s\n' "$out" | wc -l)" "0 1" "a rollback's txbox: line naming the path is one clean line"
out=$(tx check -c "$(printf 'rm -rf / \033]0;t\007')" 2>&1)
is "$(raw "$out")" 0 "txbox check writes no control byte"

# ---- 9. the exec check judges the program that runs, not the name the caller chose ----
# (From a script file, which the check before the run does not read: the exec check is on
# its own here.)
new_ws
py() { # NAME CODE: a script in the workspace, committed as part of it
        printf 'import ctypes, os, sys\nargv = ["ls", "-R", "777", os.getcwd()]\n%s\n' "$2" >"$WS/$1"
}
py alias.py 'os.execv("/bin/chmod", argv)'
py link.py 'os.symlink("/bin/chmod", "src/ls"); os.execv("src/ls", argv)'
py memfd.py 'fd = os.memfd_create("ls"); os.write(fd, open("/bin/chmod", "rb").read()); os.execve(fd, argv, dict(os.environ))'
py procfd.py 'fd = os.open("/bin/chmod", os.O_RDONLY); os.execv("/proc/self/fd/%d" % fd, argv)'
py procexe.py 'os.execv("/proc/self/root/bin/chmod", argv)'
py devfd.py 'fd = os.open("/bin/chmod", os.O_RDONLY); os.execv("/dev/fd/%d" % fd, argv)'
py linkfd.py 'fd = os.open("/bin/chmod", os.O_RDONLY); os.symlink("/proc/self/fd/%d" % fd, "src/ls"); os.execv("src/ls", argv)'
py proc1.py 'fd = os.open("/bin/chmod", os.O_RDONLY); os.execv("/proc/%d/fd/%d" % (os.getpid(), fd), argv)'
py at.py 'libc = ctypes.CDLL(None, use_errno=True)
d = os.open("/usr/bin", os.O_RDONLY | os.O_DIRECTORY)
arr = (ctypes.c_char_p * 5)(*[a.encode() for a in argv], None)
libc.syscall(322, d, b"chmod", arr, None, 0)
print("execveat", ctypes.get_errno())'
py atfd.py 'libc = ctypes.CDLL(None, use_errno=True)
d = os.open("/usr/bin/chmod", os.O_RDONLY)
arr = (ctypes.c_char_p * 5)(*[a.encode() for a in argv], None)
libc.syscall(322, d, b"", arr, None, 0x1000)
print("execveat", ctypes.get_errno())'
before=$(tree_hash "$WS")
for f in alias link memfd procfd procexe devfd linkfd proc1 at atfd; do
        out=$(tx run -- python3 "$f.py" 2>&1)
        is "$(tree_hash "$WS")" "$before" "$f: chmod -R under another name did not run ($(printf '%s' "$out" | grep -o 'rule [a-z-]*' | head -1))"
        like "$(tx show "$(last_tx)")" "violation (chmod-broad|exec-unnamed)" "$f: refused at the exec, the rule named"
done
py ok.py 'os.execv("/bin/echo", ["printf-alias", "fine"])'
is "$(tx run -- python3 ok.py 2>&1)" "fine" "an exec whose name differs but whose program is harmless runs"

# ---- 11. a tool's own steps are spared only the workspace's rules, and only for real ----
# git's own subcommands, make's and npm's recipes are judged by their effects for the rules
# of scope workspace (git history, .git): docs/DESIGN.md, "What is judged at exec".  Who runs
# an exec is read by the supervisor from the kernel, never from what the program says: each
# attack below runs from a file the check before the run does not read, and must be refused
# at the exec, naming the rule, with the workspace and the home as they were.
new_ws
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.com GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.com
export GIT_CONFIG_NOSYSTEM=1 npm_config_update_notifier=false
git -C "$WS" init -q && git -C "$WS" add -A && git -C "$WS" commit -qm init
echo "uncommitted work" >>"$WS/README"
echo precious >"$HOME/precious.txt"
home_sum() { (cd "$HOME" && find . -path ./.local -prune -o -printf '%p %y\n' | sort; cat precious.txt) | sha256sum; }
home0=$(home_sum)
attack() { # DESCRIPTION RULE FILE CONTENT [RUNNER...]: FILE holds the attack, RUNNER runs it
        local what=$1 rule=$2 file=$3 content=$4
        shift 4
        printf '%s\n' "$content" >"$WS/$file"
        chmod +x "$WS/$file"
        git -C "$WS" add "$file" >/dev/null 2>&1 && git -C "$WS" commit -qm "$file" >/dev/null 2>&1
        local before out
        before=$(tree_hash "$WS")
        out=$(tx run -- "$@" 2>&1)
        is "$(tree_hash "$WS"):$(grep -c 'uncommitted work' "$WS/README")" "$before:1" "$what: nothing changed"
        like "$(tx show "$(last_tx)")" "violation $rule" "$what: refused at the exec by $rule"
        is "$(home_sum)" "$home0" "$what: the home is untouched"
}
attack "a script's git reset --hard" git-reset-hard reset.sh '#!/bin/sh
git reset --hard' ./reset.sh
attack "sh -c git reset --hard in a script" git-reset-hard shc.sh '#!/bin/sh
sh -c "git reset --hard"' ./shc.sh
attack "git -c alias.x=!git x reset --hard" git-reset-hard alias.sh '#!/bin/sh
git -c alias.x="!git" x reset --hard' ./alias.sh
attack "git -c alias.x=reset --hard (expanded by git itself)" git-reset-hard alias2.sh '#!/bin/sh
git -c alias.x="reset --hard" x' ./alias2.sh
attack "git -c alias.x=!rm -rf ~" rm-root alias3.sh '#!/bin/sh
git -c alias.x="!rm -rf ~" x' ./alias3.sh
git -C "$WS" config alias.wipe 'reset --hard'
git -C "$WS" config alias.run '!git'
attack "an alias in the repository's config" git-reset-hard repoalias.sh '#!/bin/sh
git wipe' ./repoalias.sh
attack "a !git alias in the repository's config" git-reset-hard repoalias2.sh '#!/bin/sh
git run reset --hard' ./repoalias2.sh
attack "git stash by a copy of git in the workspace" git-reset-hard copy.sh '#!/bin/sh
mkdir -p bin && cp "$(command -v git)" bin/git && bin/git stash -q' ./copy.sh
attack "GIT_EXEC_PATH leading git stash to a script named git" rm-root fakegit.sh '#!/bin/sh
mkdir -p fake && printf "#!/bin/sh\nrm -rf ~\n" >fake/git && chmod +x fake/git && GIT_EXEC_PATH=$PWD/fake git stash -q' ./fakegit.sh
printf 'import os, sys\nos.execv(sys.executable, ["make", "named.py"])\n' >"$WS/mkname.py"
attack "a program naming itself make" git-reset-hard named.py 'import os
pid = os.fork()
if pid == 0:
    os.execvp("git", ["git", "reset", "--hard"])
os.waitpid(pid, 0)' python3 mkname.py
printf 'x:\n\trm -rf $(HOME)\ny:\n\tpython3 -c "import os; os.system(\x27rm -rf ~\x27)"\nz:\n\tgit push --force origin main\n' >"$WS/Makefile"
git -C "$WS" add Makefile && git -C "$WS" commit -qm make
attack "a make recipe's rm -rf ~" rm-root mk1.sh '#!/bin/sh
make -s x' ./mk1.sh
attack "a make recipe's python -c os.system(rm -rf ~)" rm-root mk2.sh '#!/bin/sh
make -s y' ./mk2.sh
attack "a make recipe's forced push" git-push-force mk3.sh '#!/bin/sh
make -s z' ./mk3.sh
attack "a copy of make in the workspace" git-reset-hard mk4.sh '#!/bin/sh
printf "w:\n\tgit reset --hard\n" >M && cp "$(command -v make)" ./mk && ./mk -s -f M w' ./mk4.sh
if command -v npm >/dev/null 2>&1; then
        printf '{"name": "a", "version": "1.0.0", "scripts": {"home": "rm -rf ~"}}\n' >"$WS/package.json"
        git -C "$WS" add package.json && git -C "$WS" commit -qm npm
        attack "an npm script's rm -rf ~" rm-root npm1.sh '#!/bin/sh
npm run -s --cache "$PWD/.npmc" home' ./npm1.sh
        attack "npm's variables set by hand" git-discard-changes npm2.sh '#!/bin/sh
npm_lifecycle_event=clean npm_execpath=/usr/bin/npm sh -c "git checkout -- ."' ./npm2.sh
        attack "a node program (not npm) spawning git" git-discard-changes npm3.js \
                'require("child_process").execFileSync("git", ["checkout", "--", "."])' node npm3.js
else
        skip "npm attacks" "npm not installed"
fi
git -C "$WS" config --unset alias.wipe
git -C "$WS" config --unset alias.run
unset GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL GIT_CONFIG_NOSYSTEM

# ---- 10. hooks: the workspace is the user's, not the event's cwd ----
new_ws
hev() { # TOOL CWD COMMAND
        python3 -c 'import json,sys; print(json.dumps({"session_id": "s", "cwd": sys.argv[2], "hook_event_name": "PreToolUse",
                "tool_name": sys.argv[1], "tool_input": {"command": sys.argv[3]}}))' "$@"
}
for agent in codex claude-code gemini; do
        tool=Bash
        [ $agent = gemini ] && tool=run_shell_command
        out=$(cd "$WS" && hev $tool "$HOME/.ssh" 'cat id_rsa' | env -u CLAUDE_PROJECT_DIR "$TXBOX" hook $agent 2>&1)
        like "$out" '"(permissionDecision|decision)":"deny".*secret-access' "$agent: a key read from an event cwd in the secrets is refused"
        out=$(hev $tool "$HOME/.ssh" 'cat id_rsa' | "$TXBOX" -C "$WS" hook $agent 2>&1)
        like "$out" '"(permissionDecision|decision)":"deny".*secret-access' "$agent: ... also with -C"
        out=$(cd "$WS" && hev $tool "/" 'rm -rf *' | env -u CLAUDE_PROJECT_DIR "$TXBOX" hook $agent 2>&1)
        like "$out" '"deny"' "$agent: a cwd outside the workspace makes relative paths outside paths"
        out=$(cd "$WS" && hev $tool "relative/dir" 'ls' | env -u CLAUDE_PROJECT_DIR "$TXBOX" hook $agent 2>"$T/h.err")
        is "$?" 2 "$agent: a cwd that is not an absolute directory cannot be judged from: blocked"
done
# The workspace's own Claude settings may refuse more, never lift one of txbox's asks.
mkdir -p "$WS/.claude"
printf '{"permissions": {"allow": ["Bash(npm publish)", "Bash"]}}\n' >"$WS/.claude/settings.local.json"
out=$(cd "$WS" && hev Bash "$WS" 'npm publish' | "$TXBOX" hook claude-code 2>&1)
like "$out" '"permissionDecision":"ask"' "claude-code: an allow in the workspace's settings does not lift an ask"
rm -f "$WS/.claude/settings.local.json" && ln -s "$HOME/.ssh/id_rsa" "$WS/.claude/settings.local.json"
out=$(cd "$WS" && hev Bash "$WS" 'echo hi' | "$TXBOX" hook claude-code 2>&1)
ok "... and a settings file that is a link to a secret is not read" eval '! secret_in "$out"'
rm -f "$WS/.claude/settings.local.json" && mkfifo "$WS/.claude/settings.local.json"
ok "... nor one that is a fifo (no hang)" timeout 10 sh -c "cd '$WS' && '$TXBOX' hook claude-code <<'EOF' >/dev/null
$(hev Bash "$WS" 'echo hi')
EOF"
rm -rf "$WS/.claude"

# ---- 4. the workspace's policy cannot be replaced from inside ----
new_ws
permissive='version: 1\ndefaults: false\nrules:\n  - id: anything\n    decision: allow\n    program: "*"\n'
denies() { # DESCRIPTION: the built-in policy still refuses rm -rf ~
        local out
        out=$(tx check -c 'rm -rf ~' 2>&1)
        is "$?" 1 "$1: rm -rf ~ is still refused"
}
out=$(tx run -- sh -c "mkdir -p conf && printf '$permissive' >conf/policy && ln -s conf .txbox" 2>&1)
is "$?" 123 "a command that makes .txbox a link to its own policy is rolled back"
like "$out" "effect-protected-path.*\.txbox" "... by the protected-path rule"
ok "... and leaves no .txbox" test ! -e "$WS/.txbox" -a ! -L "$WS/.txbox"
out=$(tx run -- sh -c "mkdir -p .txbox && echo x >.txbox/notes" 2>&1)
is "$?" 123 "any change under .txbox/ is a protected path"
# Planted anyway (a bypass, an earlier tool): a link is never followed, whatever it leads to.
mkdir -p "$WS/conf" && printf "$permissive" >"$WS/conf/policy" && ln -s conf "$WS/.txbox"
tx check -c 'echo hi' >/dev/null 2>&1
is "$?" 2 "a .txbox that is a link makes the policy unreadable: check fails closed"
out=$(tx run -- sh -c 'echo ran >ran.txt' 2>&1)
ok "... and run refuses to run anything ($(printf '%s' "$out" | head -c 60))" test ! -e "$WS/ran.txt"
rm "$WS/.txbox" && mkdir "$WS/.txbox" && ln -s ../conf/policy "$WS/.txbox/policy"
tx check -c 'echo hi' >/dev/null 2>&1
is "$?" 2 "a .txbox/policy that is a link is not followed either"
rm "$WS/.txbox/policy" && mkfifo "$WS/.txbox/policy"
timeout 10 "$TXBOX" -C "$WS" check -c 'echo hi' >/dev/null 2>&1
is "$?" 2 "a fifo there neither hangs the check nor passes it"
rm "$WS/.txbox/policy"
# A plain file that would loosen the policy: only its restrictions apply until trusted.
printf "$permissive" >"$WS/.txbox/policy"
denies "an untrusted permissive workspace policy"
like "$(tx check -c 'rm -rf ~' 2>&1)" "not trusted.*txbox trust" "... and check says why"
out=$(tx run -- sh -c "rm -rf ~" 2>&1)
is "$?" 126 "... run refuses it too"
printf 'version: 1\nrules:\n  - id: no-make\n    decision: deny\n    reason: use ninja\n    program: make\neffects:\n  max_file_size: 10\n' \
        >"$WS/.txbox/policy"
like "$(tx check -c 'make all' 2>&1)" "no-make" "an untrusted workspace policy still adds its refusals"
out=$(tx run -- sh -c 'head -c 100 /dev/zero >big' 2>&1)
is "$?" 123 "... and its stricter effect limits"
printf 'version: 1\nrules:\n  - id: rm-ask\n    decision: ask\n    reason: ask first\n    program: rm\n' >"$WS/.txbox/policy"
like "$(tx check -c 'rm -rf ~' 2>&1)" "^deny \(rm-root\)" "... an ask of its own never softens a built-in refusal"
like "$(cd "$WS" && tx check -c 'rm notes.txt' 2>&1)" "^ask \(rm-ask\)" "... and asks where the built-in policy allows"
# Trust: the exact file, recorded outside the workspace.
printf "$permissive" >"$WS/.txbox/policy"
out=$(tx trust 2>&1)
is "$?" 0 "txbox trust trusts the file ($(printf '%s' "$out" | head -1 | cut -c1-60))"
like "$out" "allowing: anything.*without the built-in rules" "... saying what it trusts"
is "$(tx check -c 'rm -rf ~' 2>&1; echo $?)" "allow
0" "a trusted policy applies as written"
is "$(tx trust --status >/dev/null 2>&1; echo $?)" 0 "trust --status: trusted"
printf '# changed\n' >>"$WS/.txbox/policy"
denies "a trusted file changed since"
is "$(tx trust --status >/dev/null 2>&1; echo $?)" 1 "trust --status: no longer trusted"
tx trust >/dev/null 2>&1 && tx trust --revoke >/dev/null 2>&1
denies "after trust --revoke"
# The trust store cannot be written from inside, nor kept where commands write.
tx run -- sh -c 'mkdir -p ~/.config/txbox; echo x >>~/.config/txbox/trusted-policies' >/dev/null 2>&1
ok "the sandbox cannot write the trust store" sh -c "! grep -q '^x' '$HOME/.config/txbox/trusted-policies' 2>/dev/null"
out=$(XDG_CONFIG_HOME="$WS/cfg" "$TXBOX" -C "$WS" trust 2>&1)
is "$?" 1 "txbox trust refuses a store inside the workspace"
mkdir -p "$WS/cfg/txbox" && printf '%s %s\n' "$(sha256sum <"$WS/.txbox/policy" | cut -c1-64)" "$WS" >"$WS/cfg/txbox/trusted-policies"
out=$(XDG_CONFIG_HOME="$WS/cfg" "$TXBOX" -C "$WS" check -c 'rm -rf ~' 2>&1)
is "$?" 1 "... and a forged store there is not honoured"
rm -rf "$WS/.txbox" "$WS/conf" "$WS/cfg"

done_testing
