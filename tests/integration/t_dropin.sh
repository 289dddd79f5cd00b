#!/bin/bash
# txbox sh as a drop-in sh: the shell's own options (-lc, -ec, -xc, -o ...) are passed on;
# txbox started inside txbox's sandbox (an inherited SHELL=txbox-sh) runs its command in the
# current sandbox, still judged; processes left running when a command ends are named as
# they are stopped.  Everything runs through txbox, in the jail, on throwaway trees.
. "$(dirname "$0")/lib.sh"

new_ws
ntx() { tx log --json 2>/dev/null | grep -o '"tx": ' | wc -l; }

# ---- sh's options ----
printf 'export FROM_PROFILE=yes\n' >"$HOME/.profile"
is "$(tx sh -lc 'echo "${FROM_PROFILE:-no} $0 $1"' name arg 2>&1)" "yes name arg" \
        "-lc: a login shell (reads ~/.profile), NAME and ARG as with sh -lc"
is "$(tx sh -c 'echo "${FROM_PROFILE:-no}"' 2>&1)" "no" "... which -c alone is not"
is "$(tx sh --login -c 'echo "${FROM_PROFILE:-no}"' 2>&1)" "yes" "--login is -l"
rm -f "$HOME/.profile"
out=$(tx sh -ec 'echo a >e1.txt; false; echo b >e2.txt' 2>&1)
is "$?:$(ls "$WS" | grep -c '^e[12].txt$')" "1:0" "-ec: stops at the first failure, exit 1, rolled back"
out=$(tx sh -e -c 'false; echo reached')
is "$?:$out" "1:" "-e -c: the same as separate words"
out=$(tx sh -c -e 'false; echo reached')
is "$?:$out" "1:" "-c -e STRING: -e is an option, the first operand the string (as sh reads it)"
is "$(tx sh -xc 'echo traced' 2>&1 >/dev/null | grep -c '^+ echo traced')" 1 "-xc: the shell traces (+ echo ...)"
out=$(tx sh -o errexit -c 'false; echo reached')
is "$?:$out" "1:" "-o errexit -c: a named option with its value"
out=$(tx sh -eo errexit -c 'false; echo reached')
is "$?:$out" "1:" "-eo errexit -c: o in a cluster takes the next word"
out=$(tx sh -euxc 'echo "$UNSET_VAR_XYZ"' 2>&1)
like "$?:$out" "^[12]:.*UNSET_VAR_XYZ" "-euxc: four letters at once (-u refuses an unset variable)"
is "$(tx sh -ic 'echo interactive' </dev/null 2>/dev/null)" "interactive" "-ic: an interactive shell runs the string"
is "$(tx sh -v -c 'true' 2>&1 | grep -c '^txbox: tx .* committed')" 1 "-v alone is txbox's --verbose"
tx sh -c 'echo kept >discarded.txt' --commit=discard >/dev/null 2>&1
ok "txbox's long options right after the string still count (--commit=discard)" test ! -e "$WS/discarded.txt"
is "$(tx sh -c 'echo "$0 $1"' -- n a 2>&1)" "n a" "-- after the string ends txbox's options"
out=$(tx sh -l 2>&1)
is "$?:$(printf '%s\n' "$out" | wc -l)" "125:1" "no -c: exit 125 and one line, not the whole usage"
like "$out" "^txbox: sh: -c STRING is required" "... saying what is missing"
out=$(tx sh --bogus -c true 2>&1)
is "$?:$(printf '%s\n' "$out" | wc -l)" "125:1" "an unknown long option: 125, one line"
out=$(tx sh -c 2>&1)
like "$?:$out" "^125:txbox: sh: -c needs the string" "-c without a string"
like "$(tx sh --help)" "SH OPTIONS are passed on" "--help describes the shell's options"

# ---- txbox inside txbox ----
new_ws
# (A sanitizer's build of txbox cannot start inside the sandbox at all: its shadow memory is
# over the sandbox's RLIMIT_DATA.  The inner txbox is then a txbox that cannot run.)
if tx run -- "$TXBOX" --version 2>&1 | grep -q AddressSanitizer; then
        skip "txbox inside txbox" "this txbox is a sanitizer's build, which cannot start in the sandbox"
else
        mkdir -p "$T/bin"
        printf '#!/bin/sh\nexec "%s" sh "$@"\n' "$TXBOX" >"$T/bin/txbox-sh"
        chmod +x "$T/bin/txbox-sh"
        printf '#!/bin/sh\n"$SHELL" -lc "echo via-shell >inner.txt"\necho "inner status $?"\n' >"$WS/agent-tool.sh"
        chmod +x "$WS/agent-tool.sh"
        n0=$(ntx)
        out=$(SHELL="$T/bin/txbox-sh" tx run -- ./agent-tool.sh 2>&1)
        is "$?" 0 "an inherited SHELL=txbox-sh inside the sandbox works"
        like "$out" "inner status 0" "... the inner txbox sh ran its string"
        unlike_state=$(printf '%s' "$out" | grep -c 'state dir')
        is "$unlike_state" 0 "... without asking for a state dir"
        is "$(cat "$WS/inner.txt" 2>/dev/null)" "via-shell" "... its change committed with the outer transaction"
        is "$(ntx)" "$((n0 + 1))" "... as one transaction, not two"
        printf '#!/bin/sh\n"%s" run --net=host --commit=keep -- sh -c "echo opts >opts.txt"\necho "inner status $?"\n' \
                "$TXBOX" >"$WS/opts.sh"
        chmod +x "$WS/opts.sh"
        out=$(tx run -- ./opts.sh 2>&1)
        like "$out" "inside txbox's sandbox already.*--commit, --net do not apply here" \
                "options that shape a transaction of its own are named as not applying"
        is "$(cat "$WS/opts.txt" 2>/dev/null)" "opts" "... and the command ran in the current sandbox"
        printf '#!/bin/sh\n"%s" log\necho "log status $?"\n' "$TXBOX" >"$WS/log.sh"
        chmod +x "$WS/log.sh"
        out=$(tx run -- ./log.sh 2>&1)
        like "$out" "inside txbox's sandbox.*run it outside the sandbox" "txbox log inside says plainly it runs outside"
        like "$out" "log status 125" "... with 125"
        # The inner txbox is no way around the checks: its command is judged at its exec.
        echo precious >"$HOME/precious.txt"
        printf '#!/bin/sh\n"%s" sh -c "rm -rf ~"\n' "$TXBOX" >"$WS/nested.sh"
        chmod +x "$WS/nested.sh"
        before=$(tree_hash "$WS")
        tx run -- ./nested.sh >/dev/null 2>&1
        is "$(cat "$HOME/precious.txt" 2>/dev/null)" "precious" "rm -rf ~ through an inner txbox sh is refused"
        like "$(tx show "$(last_tx)")" "violation rm-root" "... at its exec, by rm-root"
        is "$(tree_hash "$WS")" "$before" "... and rolled back"
fi
# Outside a sandbox nothing can claim to be inside one: the mark must be on a read-only tmpfs.
if (: >/dev/.txbox-sandbox) 2>/dev/null; then
        echo "$WS" >/dev/.txbox-sandbox
        n0=$(ntx)
        tx sh -c 'echo forged >forged.txt' >/dev/null 2>&1
        is "$(ntx)" "$((n0 + 1))" "a forged mark in a writable /dev is not taken: a transaction as usual"
        rm -f /dev/.txbox-sandbox
else
        skip "a forged mark in /dev" "this jail's /dev is read-only"
fi

# ---- processes left running ----
new_ws
out=$(tx sh -c 'sleep 600 & sleep 0.5; echo started' 2>&1)
is "$?" 0 "a command that leaves a process in the background commits"
like "$out" "txbox: warning: stopped with the command, still running in the background: sleep 600 \(pid [0-9]+\)" \
        "... and says which process was stopped"
out=$(tx sh -c 'echo done' 2>&1)
is "$(printf '%s' "$out" | grep -c 'background')" 0 "no notice when nothing is left running"
printf 'import os, time\nif os.fork() == 0:\n    os.execv("/bin/sleep", ["\\x1b]0;pwned\\x07\\x1b[2J", "600"])\ntime.sleep(0.5)\n' >"$WS/bg.py"
out=$(tx run -- python3 bg.py 2>&1)
is "$(printf '%s' "$out" | tr -d '\n' | LC_ALL=C grep -c "$(printf '\033')")" 0 \
        "a process's name reaches the terminal escaped"
like "$out" 'still running in the background: \\x1b\]0;pwned' "... shown as escapes"
py_server='import http.server, threading, urllib.request
s = http.server.HTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
threading.Thread(target=s.serve_forever, daemon=True).start()
print(urllib.request.urlopen("http://127.0.0.1:%d/README" % s.server_port).read().decode().strip())'
printf '%s\n' "$py_server" >"$WS/serve.py"
is "$(tx run --net=loopback -- python3 serve.py 2>/dev/null)" "hello" \
        "a server started, used and stopped within one command (--net=loopback)"

done_testing
