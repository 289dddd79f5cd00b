#!/bin/bash
# The transactional core end to end: commit, rollback on failure, keep then commit, undo,
# opaque directories, symlinks and modes, output passed through.
. "$(dirname "$0")/lib.sh"

new_ws
orig=$(tree_hash "$WS")

out=$(tx run -- sh -c 'echo to-stdout; echo to-stderr >&2; echo new >"$0/new.txt"; echo more >>README' "$WS" 2>"$T/err")
is "$?" 0 "a successful program exits 0"
is "$out" "to-stdout" "stdout passes through"
is "$(cat "$T/err")" "to-stderr" "stderr passes through"
is "$(cat "$WS/new.txt")" "new" "an added file is committed"
is "$(cat "$WS/README")" "hello
more" "a modified file is committed"
is "$(tx log --json -n 1 | grep -o '"outcome": *"[a-z_]*"')" '"outcome": "committed"' "the log says committed"
committed=$(tree_hash "$WS")
first=$(last_tx)
d=$(tx diff "$first")
like "$d" "^--- a/README" "diff names the modified file"
like "$d" "\+more" "diff shows the added line"
like "$d" "\+\+\+ b/new.txt" "diff shows the added file"
like "$(tx show "$first")" "outcome   committed" "show prints the outcome for people"
like "$(tx show "${first:0:4}")" "^tx        $first" "show takes a unique id prefix"

# A command that changes nothing leaves nothing in the state dir (no undo to keep).
state_tx=$(ls -d "$HOME"/.local/state/txbox/*/tx)
n_before=$(ls "$state_tx" | wc -l)
tx run -- sh -c 'cat README >/dev/null; ls >/dev/null'
is "$?" 0 "a read-only command commits"
is "$(ls "$state_tx" | wc -l)" "$n_before" "and leaves no transaction directory behind"


tx run -- sh -c 'echo junk >junk.txt; rm README; exit 3' 2>"$T/err"
is "$?" 3 "a failing program's status is returned"
ok "its added file is rolled back" test ! -e "$WS/junk.txt"
ok "its deletion is rolled back" test -f "$WS/README"
is "$(tree_hash "$WS")" "$committed" "the tree is as before the failed run"
like "$(cat "$T/err")" '^txbox: rolled back tx [0-9a-f]+: the program exited with status 3' "a txbox: line says why"

tx run --commit=keep -- sh -c 'echo kept >kept.txt'
is "$?" 0 "keep: the program's status"
ok "keep: nothing applied yet" test ! -e "$WS/kept.txt"
id=$(last_tx)
is "$(tx show --json "$id" | grep -o '"outcome": *"[a-z_]*"')" '"outcome": "pending"' "keep: pending"
ok "commit of the pending tx" tx commit "$id"
is "$(cat "$WS/kept.txt" 2>/dev/null)" "kept" "commit applied the pending change"

tx run -- sh -c 'rm -rf docs && mkdir docs && echo fresh >docs/c.txt'
ok "opaque dir: old files gone" test ! -e "$WS/docs/a.txt" -a ! -e "$WS/docs/b.txt"
is "$(cat "$WS/docs/c.txt")" "fresh" "opaque dir: new file there"
rec=$(tx show --json "$(last_tx)")
like "$rec" '"deleted": \[[^]]*"docs/a.txt"' "opaque dir: old file reported deleted"
like "$rec" '"added": \[[^]]*"docs/c.txt"' "opaque dir: new file reported added"

tx run -- sh -c 'ln -sfn src link && chmod 0700 src/main.c && ln -s missing dangling'
is "$(readlink "$WS/link")" "src" "a retargeted symlink is committed"
is "$(readlink "$WS/dangling")" "missing" "a new dangling symlink is committed"
is "$(stat -c %a "$WS/src/main.c")" "700" "a mode change is committed"

tx run -- sh -c 'cp README R2 && chmod 4755 R2' 2>/dev/null
# Refused by the policy, rolled back by the setuid effect rule, or committed without the bit:
# in no case does a setuid file reach the workspace.
ok "setuid is never committed" test ! -u "$WS/R2"

# undo everything, newest first, back to the original tree
for i in 1 2 3 4 5 6; do tx undo >/dev/null 2>&1 || break; done
is "$(tx undo 2>&1)" "txbox: nothing to undo: no committed transaction in this workspace's log" "nothing left to undo"
is "$(tree_hash "$WS")" "$orig" "undo of every commit restores the original tree"

tx run --commit=discard -- sh -c 'echo x >discarded.txt'
ok "discard: nothing applied" test ! -e "$WS/discarded.txt"

tx run --timeout=0.5 -- sh -c 'echo t >t.txt; sleep 30'
is "$?" 124 "timeout: exit 124"
ok "timeout: rolled back" test ! -e "$WS/t.txt"

tx run -- no-such-program-xyz 2>"$T/err"
is "$?" 127 "a missing program: 127"
like "$(cat "$T/err")" "no-such-program-xyz: command not found" "a missing program is named"

tx run --report="$T/r.json" -- sh -c 'echo r >r.txt'
like "$(cat "$T/r.json")" '^\{"tx": "[0-9a-f]+", "argv": \["sh", "-c", "echo r >r.txt"\], "decision": "allow", "rule": null, "reason": null, "exit_code": 0, "signal": null, "outcome": "committed", "changes": \{"added": \["r.txt"\], "modified": \[\], "deleted": \[\]\}, "violations": \[\], "duration_ms": [0-9]+' "--report writes the contract's JSON record"

tx sh -c 'echo via-sh >sh.txt; exit 0'
is "$(cat "$WS/sh.txt")" "via-sh" "txbox sh -c commits like run"

# What a committed transaction leaves besides its undo data (its layers; a read-only one's
# whole directory) moves to state/trash in one rename and is removed while a later command
# runs; a layer once a sync has covered the renames out of it (the next commit's).
state=${state_tx%/tx}
tx run -- sh -c 'echo a >trash1.txt'
t1=$(last_tx)
ok "a committed tx keeps no layers" test ! -e "$state_tx/$t1/upper" -a ! -e "$state_tx/$t1/work"
ok "but its journal (undo)" test -f "$state_tx/$t1/journal"
ok "its layers wait in the trash" test -d "$state/trash/$t1.upper" -a -d "$state/trash/$t1.work"
tx run -- sh -c 'echo b >trash2.txt; exit 4'
t2=$(last_tx)
ok "a rolled-back tx's directory is removed at once" test ! -e "$state/trash/$t2" -a ! -e "$state_tx/$t2"
ok "the layers stay while no later sync has covered their commit" test -d "$state/trash/$t1.upper"
tx run -- sh -c 'echo c >trash3.txt'
t3=$(last_tx)
tx run -- true
t4=$(last_tx)
ok "once the next commit synced, the next command removed them" test ! -e "$state/trash/$t1.upper" -a ! -e "$state/trash/$t1.work"
is "$(ls "$state/trash" | LC_ALL=C sort | tr '\n' ' ')" "$(printf '%s\n' "$t3.upper" "$t3.work" "$t4" | LC_ALL=C sort | tr '\n' ' ')" \
        "a read-only command empties the trash, leaving only the unsettled layers and its own directory"

# state/seq: the newest commit's number, so that a run begins without opening the log.
seq=$(tx log --json | grep -o '"commit_seq": [0-9]*' | sed 's/.* //' | sort -n | tail -1)
is "$(cat "$state/seq")" "$(printf '%020d' "$seq")" "state/seq holds the newest commit's number"
printf 'garbage' >"$state/seq"
tx run -- sh -c 'echo s >seq1.txt'
ok "a damaged state/seq is not trusted: the run asks the log and commits" test -f "$WS/seq1.txt"
is "$(cat "$state/seq")" "$(printf '%020d' $((seq + 1)))" "and the commit writes it afresh"

done_testing
