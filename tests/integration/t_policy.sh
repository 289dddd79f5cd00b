#!/bin/bash
# The policy in a transaction: refused before it runs (126), refused at exec while it runs
# (rolled back with the rule), effect rules judged on the changes (123).  Every destructive
# command here targets only this test's throwaway tree, through txbox, inside the jail.
. "$(dirname "$0")/lib.sh"

new_ws
echo precious >"$HOME/precious.txt"
orig=$(tree_hash "$WS")
home_hash() { (cd "$HOME" && find . \( -path ./.local -o -path ./.cache \) -prune -o -printf "%p %y\n" | sort; cat precious.txt) | sha256sum; }
home_before=$(home_hash)

err=$(tx sh -c 'rm -rf ~' 2>&1)
is "$?" 126 "rm -rf ~ is denied before it runs: 126"
like "$err" "^txbox: denied by rule [a-z0-9-]+: .* \(in: rm -rf ~\); nothing ran$" "the refusal names the rule, the reason and the command"
rec=$(tx show --json "$(last_tx)")
like "$rec" '"decision": "deny", "rule": "[a-z0-9-]+", "reason": "[^"]+", "exit_code": null, "signal": null, "outcome": "denied"' "the record says denied, with the rule and reason"

err=$(tx run -- sh -c 'echo cm0gLXJmIH4K | base64 -d | sh' 2>&1)
is "$?" 126 "an obfuscated deletion is denied before it runs"
err=$(tx sh -c 'x=rm; $x -rf / ; echo after' 2>&1)
is "$?" 126 "an unknowable command word next to -rf / is denied"
# Code sourced behind a wrapper can set any variable, even after commands of its own
# (issue 34: before the walker, its first command made txbox forget that).
err=$(tx sh -c 'x=ls; command source /dev/stdin <<<"true; x=rm"; $x -rf ~; echo after' 2>&1)
is "$?" 126 "a variable set by code sourced behind a wrapper is unknown after it: denied"
is "$(home_hash)" "$home_before" "the home directory is untouched"

# A script file hides the command from the pre-run check: the exec check catches it.
printf '#!/bin/sh\necho start >started.txt\nrm -rf "$HOME"\necho done >done.txt\n' >"$WS/cleanup.sh"
chmod +x "$WS/cleanup.sh"
orig=$(tree_hash "$WS")
err=$(tx run -- ./cleanup.sh 2>&1)
rc=$?
ok "a destructive command inside a script does not commit (status $rc)" test "$rc" -ne 0
like "$err" "rule [a-z0-9-]+" "the txbox: line names the rule that refused the exec"
is "$(home_hash)" "$home_before" "the home directory is untouched"
is "$(tree_hash "$WS")" "$orig" "the script's other effects were rolled back"
like "$(tx show --json "$(last_tx)")" '"decision": "deny".*"outcome": "rolled_back".*"violations": \[\{"rule": "[a-z0-9-]+", "path": "rm -rf [^"]*"' "the record carries the refused exec as a violation"

# Ordinary development stays allowed.
ok "rm -rf build/ is allowed" tx sh -c 'mkdir -p build && echo o >build/o && rm -rf build/'
ok "git-like workflow commands are allowed" tx sh -c 'grep -r hello . >/dev/null; ls -la >/dev/null; cat README >/dev/null'

# Filling the disk and hunting for keys (issue 34): refused before the run, and at the
# exec of a script that hides them; what is ordinary of the same shape runs.
orig=$(tree_hash "$WS")
err=$(tx sh -c 'yes > fill.txt' 2>&1)
is "$?" 126 "an endless write into a file is denied before it runs: 126"
like "$err" "denied by rule disk-fill" "the refusal names disk-fill"
ok "and nothing was written" test ! -e "$WS/fill.txt"
printf '#!/bin/sh\necho start >started.txt\ndd if=/dev/zero of=big.img bs=1G count=500 2>/dev/null\n' >"$WS/mkimg.sh"
chmod +x "$WS/mkimg.sh"
orig=$(tree_hash "$WS")
err=$(tx run -- ./mkimg.sh 2>&1)
rc=$?
ok "a 500 GiB dd inside a script does not commit (status $rc)" test "$rc" -ne 0
like "$err" "rule disk-fill" "the exec check names disk-fill"
is "$(tree_hash "$WS")" "$orig" "nothing of it was committed"
ok "a 10 MiB dd commits" tx sh -c 'dd if=/dev/zero of=small.img bs=1M count=10 2>/dev/null && yes | head -n 5 >yes.txt'
is "$(stat -c %s "$WS/small.img")" 10485760 "small.img holds its 10 MiB"
rm -f "$WS/small.img" "$WS/yes.txt"
err=$(tx sh -c "find ~ -name 'id_*' -exec cat {} \\;" 2>&1)
is "$?" 126 "a key hunt over the home is denied before it runs: 126"
like "$err" "denied by rule secret-access" "the refusal names secret-access"
ok "a search of the workspace for a test certificate runs" tx sh -c "find . -name '*.pem' >/dev/null"

# Effect rule: mass deletion inside the workspace, by a program that exits 0.
mkdir -p "$WS/data"
for i in $(seq 1 60); do echo "$i" >"$WS/data/f$i"; done
before=$(tree_hash "$WS")
err=$(tx run -- sh -c 'find data -type f -delete; true' 2>&1)
rc=$?
if [ $rc -eq 123 ]; then
        ok "a mass deletion is rolled back by an effect rule: 123" true
        like "$err" "rule [a-z0-9-]+" "the txbox: line names the effect rule"
        is "$(tree_hash "$WS")" "$before" "the deleted files are back"
else
        is "$rc" 123 "a mass deletion is rolled back by an effect rule: 123"
        echo "# $err"
fi

# "ask" decisions: refused headless, put to an approval program with --approve.
err=$(tx run -- npm publish 2>&1)
is "$?" 126 "an ask rule (publish) is refused without an approval channel"
like "$err" "denied by rule publish \(needs approval\)" "and says it needed approval"
printf '#!/bin/sh\ncat >"%s/asked.json"\necho allow\n' "$T" >"$T/yes.sh"
printf '#!/bin/sh\necho deny\n' >"$T/no.sh"
chmod +x "$T/yes.sh" "$T/no.sh"
"$TXBOX" -C "$WS" --approve "$T/yes.sh" run -- npm publish >/dev/null 2>&1
rc=$?
ok "an approval program that answers allow lets it run (status $rc: not refused)" test "$rc" -ne 126
like "$(cat "$T/asked.json")" '"decision":"ask","rule":"publish"' "the approval program got the decision as JSON"
"$TXBOX" -C "$WS" --approve "$T/no.sh" run -- npm publish >/dev/null 2>&1
is "$?" 126 "an approval program that answers deny refuses it"
is "$("$TXBOX" -C "$WS" --approve "$T/yes.sh" check -c 'npm publish' >/dev/null; echo $?)" 0 "check consults the approval program too"

# Every exec is judged with all its arguments, however many: xargs hands thousands of
# names to one exec, which must run (and one refused argument among them must not).
tx run -- sh -c 'mkdir many && cd many && seq 5000 | sed s/^/n/ | xargs touch' 2>/dev/null
is "$?" 0 "xargs with 5,000 arguments in one exec runs"
is "$(ls "$WS/many" | wc -l)" 5000 "and its 5,000 files are committed"
err=$(tx run -- sh -c 'cd many && (ls; echo -rf; echo /) | xargs rm' 2>&1)
like "$err" "rule rm-root broken by 'rm .*exec refused" "rm -rf / hidden after 5,000 arguments of one exec is refused"
is "$(ls "$WS/many" | wc -l)" 5000 "and nothing was deleted"
rm -rf "$WS/many"

# A policy file in the workspace replaces the built-in one.
mkdir -p "$WS/.txbox"
err=$(tx check -c 'echo hi' 2>&1)
is "$?" 0 "check: echo is allowed"
err=$(tx check --json -c 'rm -rf ~' 2>&1)
is "$?" 1 "check: rm -rf ~ is refused (exit 1)"
like "$err" '"decision": ?"deny"' "check --json gives the decision"

# Effect rule: work that git cannot give back.  Untracked files deleted one by one (no
# command rule sees anything wrong) are rolled back; clean tracked ones commit.
if command -v git >/dev/null 2>&1; then
        new_ws
        mkdir -p "$WS/src"
        for i in 1 2 3 4 5 6; do echo "clean $i" >"$WS/src/c$i.txt"; done
        printf 'build/\n' >"$WS/.gitignore"
        git -C "$WS" init -q && git -C "$WS" add -A &&
                git -C "$WS" -c user.name=t -c user.email=t@example.com commit -qm init
        for i in 1 2 3 4 5 6; do echo "new work $i" >"$WS/src/n$i.txt"; done
        mkdir -p "$WS/build" && for i in 1 2 3 4 5 6; do echo o >"$WS/build/o$i"; done
        before=$(tree_hash "$WS")
        err=$(tx run -- sh -c 'for f in src/n*.txt; do rm "$f"; done' 2>&1)
        is "$?" 123 "deleting 6 untracked files is rolled back: 123"
        like "$err" "effect-lost-work" "the txbox: line names effect-lost-work"
        is "$(tree_hash "$WS")" "$before" "the untracked files are back"
        like "$(tx show --json "$(last_tx)")" '"rule": "effect-lost-work", "path": "src/n1.txt"' "the record names the paths"
        err=$(tx run -- sh -c 'for f in src/n*.txt; do : >"$f"; done' 2>&1)
        is "$?" 123 "emptying them is rolled back too"
        tx run -- sh -c 'for f in src/c*.txt build/o*; do rm "$f"; done' >/dev/null 2>&1
        is "$?" 0 "deleting 6 clean tracked files and ignored build output commits (git restores the former)"
        ok "... and they are gone" test ! -e "$WS/src/c1.txt" -a ! -e "$WS/build/o1"
        git -C "$WS" checkout -q -- src
        ok "git gives them back" test -e "$WS/src/c6.txt"
else
        ok "git not installed # SKIP" true
fi

# check --test: the built-in rules' examples hold; a policy file's are checked, and a wrong
# one is named with its file and line.
out=$(tx check --test)
is "$?" 0 "check --test: every example of the built-in rules holds (exit 0)"
like "$out" "^[0-9]+ examples of the built-in rules: 0 failed$" "check --test: and says how many ran"
cat >"$T/examples.yml" <<'YAML'
rules:
  - id: no-docker-push
    reason: pushing images publishes them; ask the user
    program: docker
    subcommand: push
    match: ["docker push img", "docker pull img"]
    not_match: ["docker images"]
YAML
out=$("$TXBOX" -C "$WS" --policy "$T/examples.yml" check --test)
is "$?" 1 "check --test: a policy file whose example fails exits 1"
like "$out" "line 2: rule no-docker-push: 'docker pull img' should be decided by this rule, but the policy allows it" \
        "check --test: the failing example, its rule's line and what happened"
like "$out" "3 examples of the policy file's rules: 1 failed$" "check --test: the count of the file's own examples"
out=$("$TXBOX" -C "$WS" --policy "$T/examples.yml" check --test --json)
like "$out" '^\{"examples": 3, "failed": 1, "failures": \[\{"rule": "no-docker-push", "file": "[^"]*examples.yml", "line": 2, "example": "docker pull img", "expected": "match", "decision": "allow", "decided_by": null\}\]\}$' \
        "check --test --json: one object with each failure"
"$TXBOX" -C "$WS" check --test -c 'ls' >/dev/null 2>&1
is "$?" 2 "check --test with a command is bad usage"

done_testing
