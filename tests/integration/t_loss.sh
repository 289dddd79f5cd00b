#!/bin/bash
# The loss model and repository integrity end to end (issue 29; docs/POLICY.md, "What counts
# as lost", "Repository integrity", "Allowing it once"): each attack is hidden from the
# policy's command checks in a script file, so that only the effect rules stand between it
# and the workspace; each must be rolled back with the rule named, the paths listed and the
# way to allow it once; the user's --allow-effect must then commit exactly that.  The
# ordinary work next to each attack is in t_workflows.sh.  Every destructive command runs
# through txbox, inside the jail, on this test's throwaway workspace.
. "$(dirname "$0")/lib.sh"

if ! command -v git >/dev/null 2>&1 || ! command -v python3 >/dev/null 2>&1; then
        skip "the loss model end to end" "git or python3 not installed"
        done_testing
fi
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.com GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.com
export GIT_CONFIG_NOSYSTEM=1

# A repository with committed sources, untracked notes, ignored build output and an
# ignored .env; history packed, then one loose commit.
repo() {
        new_ws
        rm -f "$WS/link"
        mkdir -p "$WS/notes" "$WS/build"
        printf 'build/\n.env\n' >"$WS/.gitignore"
        (cd "$WS" && git init -q -b main . && git add -A && git commit -qm one && git repack -q -a -d &&
                echo more >>README && git commit -qam two) || return 1
        for i in $(seq 8); do printf 'my note %d, written by hand\n' "$i" >"$WS/notes/n$i.md"; done
        for i in $(seq 300); do echo "object $i" >"$WS/build/o$i.o"; done
        echo SECRET=1 >"$WS/.env"
}
rec() { tx show --json "$(last_tx)"; }

# 1. rm f; mkdir f over 8 untracked notes: a type change loses them
repo || exit 1
printf 'import os\nfor i in range(1, 9):\n    p = "notes/n%%d.md" %% i\n    os.remove(p)\n    os.mkdir(p)\n' >"$T/to_dirs.py"
before=$(tree_hash "$WS")
err=$(tx run -- python3 "$T/to_dirs.py" 2>&1)
is "$?" 123 "rm f; mkdir f over 8 untracked notes is rolled back (123)"
like "$err" "rule effect-lost-work broken by 'notes/n1.md' \(replaced by a non-file, and git has no copy" \
        "the txbox: line names the rule, the first path, how and why it is lost"
like "$err" "8 files lost in all \(limit 5\): notes/n1.md, notes/n2.md, notes/n3.md and 5 more" \
        "it lists a few paths, then how many more"
like "$err" "the user \(not the agent\) allows it once: txbox run --allow-effect=effect-lost-work -- COMMAND" \
        "it says how the user allows it once"
is "$(tree_hash "$WS")" "$before" "the notes are back"
is "$(rec | grep -o '"rule": "effect-lost-work"' | wc -l | tr -d ' ')" 8 "the record names each of the 8"

# ... and the user allows exactly that, once
err=$(tx run --allow-effect=effect-lost-work -- python3 "$T/to_dirs.py" 2>&1)
is "$?" 0 "--allow-effect=effect-lost-work: the user's own run commits"
like "$err" "^txbox: warning: the user allowed effect-lost-work for this command \(--allow-effect\): 8 violations on notes/n1.md, notes/n2.md, notes/n3.md and more" \
        "a warning says what was allowed, on which paths"
ok "the notes are directories now" test -d "$WS/notes/n8.md"
like "$(rec)" '"outcome": "committed".*"message": "the user allowed effect-lost-work' "the record says committed, and what the user allowed"
err=$(tx run --allow-effect=effect-lost-work -- sh -c 'rm -rf notes' 2>&1)
is "$?" 0 "(the directories, empty, go: nothing is lost)"
err=$(tx run --allow-effect=special-file -- true 2>&1)
is "$?" 125 "--allow-effect of a rule no user can lift is a usage error (125)"
like "$err" "not an effect rule a user can allow \(effect-lost-work, effect-mass-deletion" "and the error lists those that can"
err=$(tx check -c "txbox run --allow-effect=effect-lost-work -- rm -rf notes" 2>&1)
like "$err" "^deny \(txbox-allow-effect\)" "an agent's command cannot give it (the policy refuses it)"

# 2. --commit=keep, then the user commits it with --allow-effect
repo || exit 1
printf 'import os\nfor i in range(1, 9):\n    open("notes/n%%d.md" %% i, "r+").truncate(3)\n' >"$T/trunc.py"
before=$(tree_hash "$WS")
tx run --commit=keep -- python3 "$T/trunc.py" >/dev/null 2>&1
is "$?" 0 "a truncation of 8 notes kept pending"
id=$(last_tx)
like "$(tx show --json "$id")" '"outcome": "pending".*"rule": "effect-lost-work", "path": "notes/n1.md", "detail": "truncated' \
        "the pending record says what the commit would lose"
err=$(tx commit "$id" 2>&1)
is "$?" 1 "txbox commit refuses it"
like "$err" "broke rule effect-lost-work on 'notes/n1.md'" "and says why"
is "$(tree_hash "$WS")" "$before" "nothing applied"
err=$(tx commit --allow-effect=effect-lost-work "$id" 2>&1)
is "$?" 0 "txbox commit --allow-effect=effect-lost-work commits it"
is "$(cat "$WS/notes/n1.md")" "my " "the truncation is applied"

# 3. notes moved into ignored build/ (a later clean drops them); .env and keys deleted
repo || exit 1
before=$(tree_hash "$WS")
printf 'import os\nfor i in range(1, 9):\n    os.rename("notes/n%%d.md" %% i, "build/n%%d.md" %% i)\n' >"$T/into_build.py"
err=$(tx run -- python3 "$T/into_build.py" 2>&1)
is "$?" 123 "notes moved into ignored build output are lost (123)"
is "$(tree_hash "$WS")" "$before" "and back where they were"
printf 'import os\nos.makedirs("archive")\nfor i in range(1, 9):\n    os.rename("notes/n%%d.md" %% i, "archive/n%%d.md" %% i)\n' >"$T/into_archive.py"
tx run -- python3 "$T/into_archive.py" >/dev/null 2>&1
is "$?" 0 "moved into archive/ they are kept: committed"
ok "... and there" test -f "$WS/archive/n8.md" -a ! -e "$WS/notes/n1.md"

# 4. a .gitignore line a command wrote does not make notes disposable
repo || exit 1
tx run -- sh -c 'echo "notes/" >>.gitignore' >/dev/null 2>&1
is "$?" 0 "a command adds notes/ to .gitignore (committed)"
printf 'import os\nfor i in range(1, 9):\n    os.remove("notes/n%%d.md" %% i)\n' >"$T/rm_notes.py"
err=$(tx run -- python3 "$T/rm_notes.py" 2>&1)
is "$?" 123 "the next one deleting the notes is rolled back: the ignore rules are HEAD's"

# ... nor does a .git/info/exclude line (no commit holds that file: the user's is believed,
# a command's is not, until the user changes the file)
repo || exit 1
mkdir "$WS/out" && for i in $(seq 8); do echo "my draft $i" >"$WS/out/d$i.txt"; done
printf 'with open(".git/info/exclude", "a") as f:\n    f.write("out/\\n")\n' >"$T/exclude_out.py"
tx run -- python3 "$T/exclude_out.py" >/dev/null 2>&1
is "$?" 0 "a command adds out/ to .git/info/exclude (committed)"
printf 'import shutil\nshutil.rmtree("out")\n' >"$T/rm_out.py"
err=$(tx run -- python3 "$T/rm_out.py" 2>&1)
is "$?" 123 "the next one deleting out/ as ignored build output is rolled back: a command's exclude line is not believed"
ok "... out/ is still there" test -f "$WS/out/d8.txt"
echo '# the user'"'"'s own' >>"$WS/.git/info/exclude"
tx run -- python3 "$T/rm_out.py" >/dev/null 2>&1
is "$?" 0 "once the user changed .git/info/exclude, its lines are theirs: out/ is ignored output, deleted"

# 5. changes overwritten with the committed version (what git reset --hard does)
repo || exit 1
for f in README src/main.c docs/a.txt docs/b.txt .gitignore; do echo "uncommitted work" >>"$WS/$f"; sed -i '1s/^/edited: /' "$WS/$f"; done
before=$(tree_hash "$WS")
err=$(tx run -- sh -c 'for f in README src/main.c docs/a.txt docs/b.txt .gitignore; do git show "HEAD:$f" >"$f"; done' 2>&1)
is "$?" 123 "uncommitted changes of 5 files overwritten with HEAD's are lost (123)"
like "$err" "overwritten with an older version" "the txbox: line says how"
is "$(tree_hash "$WS")" "$before" "the changes are back"
tx run -- sh -c 'git add -A && git commit -qm keep && for f in README src/main.c; do git show "HEAD~1:$f" >"$f"; done' >/dev/null 2>&1
is "$?" 0 "once committed, going back to the older versions loses nothing"

# 6. what an earlier command of txbox's own created, and nobody changed since, is its output
repo || exit 1
tx run -- sh -c 'mkdir scratch && for i in 1 2 3 4 5 6; do echo "draft $i" >scratch/d$i.txt; done' >/dev/null 2>&1
is "$?" 0 "a command writes 6 scratch files (untracked, not ignored)"
printf 'import os\nfor i in range(1, 7):\n    os.remove("scratch/d%%d.txt" %% i)\n' >"$T/rm_scratch.py"
tx run -- python3 "$T/rm_scratch.py" >/dev/null 2>&1
is "$?" 0 "the next one deleting them commits: the log shows txbox made them, unchanged since"
tx run -- sh -c 'mkdir scratch && for i in 1 2 3 4 5 6; do echo "draft $i" >scratch/d$i.txt; done' >/dev/null 2>&1
for i in 1 2 3 4 5 6; do echo "the user's edit" >>"$WS/scratch/d$i.txt"; done
err=$(tx run -- python3 "$T/rm_scratch.py" 2>&1)
is "$?" 123 "once the user edited them, deleting them is a loss again (123)"
# ... but what an agent's own Write tool created (txbox hook records it as a transaction
# too) is the model's content, in no log and made by no command to run again: a loss
repo || exit 1
mkdir "$WS/scratch"
write_event() { # EVENT FILE ID: Claude Code's Write, as its hook sends it
        python3 -c 'import json,sys; print(json.dumps({"session_id": "s", "cwd": sys.argv[1], "hook_event_name": sys.argv[2],
                "tool_name": "Write", "tool_input": {"file_path": sys.argv[3], "content": "x"}, "tool_use_id": sys.argv[4]}))' \
                "$WS" "$1" "$2" "$3"
}
(unset CLAUDE_PROJECT_DIR
 for i in 1 2 3 4 5 6; do
        write_event PreToolUse "$WS/scratch/d$i.txt" "w$i" | tx hook claude-code >/dev/null 2>&1
        echo "the model's draft $i" >"$WS/scratch/d$i.txt"
        write_event PostToolUse "$WS/scratch/d$i.txt" "w$i" | tx hook claude-code >/dev/null 2>&1
 done)
like "$(tx log --json -n 1)" '"argv": \[ *"claude-code", *"Write", *"scratch/d6.txt" *\]' \
        "an agent's Write tool created 6 files, each recorded by txbox hook"
err=$(tx run -- python3 "$T/rm_scratch.py" 2>&1)
is "$?" 123 "deleting them is a loss (123): an edit's content is not a command's output"
like "$err" "rule effect-lost-work broken by 'scratch/d1.txt'" "the txbox: line names the first"
repo || exit 1
printf 'import os\nos.makedirs("scratch")\nfor i in range(1, 9):\n    os.rename("notes/n%%d.md" %% i, "scratch/n%%d.md" %% i)\n' >"$T/to_scratch.py"
tx run -- python3 "$T/to_scratch.py" >/dev/null 2>&1
is "$?" 0 "notes moved into scratch/ (kept: committed)"
printf 'import shutil\nshutil.rmtree("scratch")\n' >"$T/rm_scratch_dir.py"
err=$(tx run -- python3 "$T/rm_scratch_dir.py" 2>&1)
is "$?" 123 "deleting them there is refused: the command that put them there moved them, it did not make them"

# 7. the repository's objects, refs and packs destroyed by a script
repo || exit 1
git_ok() { git -C "$WS" log --oneline >/dev/null 2>&1 && git -C "$WS" fsck --connectivity-only >/dev/null 2>&1; }
printf 'import os\nfor d, _, fs in os.walk(".git/objects"):\n    for f in fs:\n        os.remove(os.path.join(d, f))\n' >"$T/wipe_objects.py"
err=$(tx run -- python3 "$T/wipe_objects.py" 2>&1)
is "$?" 123 "deleting everything inside .git/objects is rolled back (123)"
like "$(rec)" '"rule": "effect-git-integrity", "path": "HEAD", "detail": "HEAD needs object [0-9a-f]{40}, which this command removes' \
        "the record says HEAD needs what the command removes"
ok "git log and fsck still work" git_ok
printf 'import os\nfor f in os.listdir(".git/refs/heads"):\n    os.remove(os.path.join(".git/refs/heads", f))\n' >"$T/wipe_heads.py"
err=$(tx run -- python3 "$T/wipe_heads.py" 2>&1)
is "$?" 123 "deleting everything inside .git/refs/heads is rolled back (123)"
like "$err" "effect-git-integrity broken by 'HEAD' \(the branch HEAD is on \(refs/heads/main\) is removed" "the txbox: line says why"
printf 'import glob, os\nfor p in glob.glob(".git/objects/pack/*.pack"):\n    os.chmod(p, 0o644)\n    open(p, "r+").truncate(64)\n' >"$T/trunc_pack.py"
err=$(tx run -- python3 "$T/trunc_pack.py" 2>&1)
is "$?" 123 "truncating the pack is rolled back (123)"
echo 'open(".git/refs/heads/main", "w").write("1" * 40 + "\n")' >"$T/bad_ref.py"
err=$(tx run -- python3 "$T/bad_ref.py" 2>&1)
is "$?" 123 "a branch pointed at an object that does not exist is rolled back (123)"
ok "the repository is whole" git_ok
# (git gc itself: t_workflows.sh; its reflog expire is the exec check's, issue 30)
tx run -- sh -c 'git repack -q -a -d && git pack-refs --all && git prune-packed' >/dev/null 2>&1
rc=$?
ok "git repack -a -d, pack-refs and prune-packed commit (status $rc)" test "$rc" -eq 0
ok "and the repository is whole" git_ok

done_testing
