#!/bin/bash
# Everyday tools run through txbox exactly as without it: their own internal steps (git
# stash's reset --hard, git gc's reflog expire and prune, pip's setup caller, make's and npm's
# recipes) are judged by their effects, not refused at exec (docs/DESIGN.md, "What is judged
# at exec").  Each workflow runs once through txbox in WS and once without txbox on a copy
# (REF), inside the jail, on throwaway trees; the results must be the same.  The attacks on
# this relaxation are in t_escape_host.sh (section 11).
. "$(dirname "$0")/lib.sh"

export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.com GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.com
export GIT_CONFIG_NOSYSTEM=1 npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
REF="$T/ref"

# What a workflow leaves: the tree (files, modes, contents), git's view of it (status, the
# branch's history, stashes) and whether the repository is whole.
state() { # DIR
        printf '%s\n' "$(tree_hash "$1")"
        if [ -d "$1/.git" ]; then
                git -C "$1" status --porcelain=v1 --untracked-files=all
                git -C "$1" log --format='%s %T' HEAD
                git -C "$1" stash list --format='%s'
                git -C "$1" fsck --no-progress 2>&1 | grep -v '^dangling' | head -3
        fi
}

repo() { # a repository with history, a tracked file changed and an untracked one
        new_ws
        printf 'build/\n*.o\n__pycache__/\nsite/\n' >"$WS/.gitignore"
        git -C "$WS" init -q -b main && git -C "$WS" add -A && git -C "$WS" commit -qm init
        for i in 1 2 3; do
                echo "v$i" >"$WS/docs/a.txt" && git -C "$WS" commit -qam "change $i"
        done
        echo "work in progress" >>"$WS/README"
        echo "new" >"$WS/docs/new.txt"
}

# same DESCRIPTION SCRIPT: SCRIPT through txbox in WS and as a plain sh -c in REF (a copy
# made now) commit the same result.
same() {
        local what=$1 script=$2 out rc
        rm -rf "$REF" && cp -a "$WS" "$REF"
        (cd "$REF" && sh -c "$script") >/dev/null 2>&1
        local want
        want=$(state "$REF")
        out=$(tx sh -c "$script" 2>&1)
        rc=$?
        is "$rc" 0 "$what: commits through txbox"
        [ "$rc" -eq 0 ] || echo "# $(printf '%s' "$out" | tail -3)"
        is "$(state "$WS")" "$want" "$what: the same result as without txbox"
}

repo
same "git stash, git stash pop" 'git stash -q && git stash pop -q'
same "git stash -u, git stash pop" 'git stash -q -u && git stash pop -q'
ok "... and the work is back in place" grep -q "work in progress" "$WS/README"
same "git worktree add, remove" 'git worktree add -q wt-side -b side && git worktree remove wt-side'

# git gc: reflog expire, repack, prune of what is two weeks old (and pack-refs).  (A few
# loose objects over a packed history: packing 20 or more where they outnumber the work files
# breaks effect-mass-deletion, which counts the loose objects among the workspace's files;
# that is the effect rules' matter, not the exec check's.)
repo
git -C "$WS" gc -q
for i in 4 5; do echo "v$i" >"$WS/docs/a.txt" && git -C "$WS" commit -qam "change $i"; done
same "git gc" 'git gc -q'
ok "... and the objects are packed" test -n "$(ls "$WS"/.git/objects/pack/*.pack 2>/dev/null)"

# git rebase, plain and with --autostash over uncommitted work.
repo
git -C "$WS" stash -q
git -C "$WS" checkout -q -b topic HEAD~2
echo topic >"$WS/src/topic.c" && git -C "$WS" add -A && git -C "$WS" commit -qm topic
git -C "$WS" stash pop -q
same "git rebase --autostash main" 'git rebase -q --autostash main'
git -C "$WS" checkout -q -b topic2 main~1
echo t2 >"$WS/src/t2.c" && git -C "$WS" add -A && git -C "$WS" commit -qm t2
same "git rebase main" 'git rebase -q main'
same "git pull --rebase from a local clone" \
        'git clone -q . ../upstream && git -C ../upstream commit -q --allow-empty -m upstream &&
         git pull -q --rebase ../upstream main; rm -rf ../upstream'

# pip: a local setup.py package, no index.  pip runs setup.py through python3 -c
# "exec(compile(...))", code that cannot be known before it runs, but is there.
if python3 -m pip --version >/dev/null 2>&1 && python3 -c 'import setuptools' 2>/dev/null; then
        repo
        mkdir -p "$WS/mypkg/mypkg"
        printf 'from setuptools import setup\nsetup(name="mypkg", version="0.1", packages=["mypkg"])\n' \
                >"$WS/mypkg/setup.py"
        echo 'VALUE = 1' >"$WS/mypkg/mypkg/__init__.py"
        rm -rf "$REF" && cp -a "$WS" "$REF"
        pipcmd='python3 -m pip install -q --no-index --no-build-isolation --no-cache-dir --target ./site ./mypkg'
        (cd "$REF" && sh -c "$pipcmd") >/dev/null 2>&1
        out=$(tx sh -c "$pipcmd" 2>&1)
        is "$?" 0 "pip install of a local setup.py package commits through txbox"
        [ -d "$WS/site" ] || echo "# $(printf '%s' "$out" | tail -3)"
        is "$(cd "$WS/site" 2>/dev/null && find . -name '*.pyc' -prune -o -print | sort)" \
                "$(cd "$REF/site" && find . -name '*.pyc' -prune -o -print | sort)" "... the same files as without txbox"
        is "$(cd "$WS" && python3 -c 'import sys; sys.path.insert(0, "site"); import mypkg; print(mypkg.VALUE)')" 1 \
                "... and the package imports"
else
        skip "pip install of a local package" "pip or setuptools not installed"
fi

# make: recipes that remove build files, and one that asks git to clean its ignored output.
repo
printf 'all:\n\tmkdir -p build && cc -c src/main.c -o build/main.o && echo done >build/stamp\n'\
'clean:\n\trm -f build/main.o\n\trm -rf build\n'\
'distclean:\n\tgit clean -fdX -q\n' >"$WS/Makefile"
git -C "$WS" add Makefile && git -C "$WS" commit -qm make
same "make all, make clean" 'make -s all && make -s clean'
same "make distclean (git clean -fdX in a recipe)" 'make -s all && touch x.o && make -s distclean'

# npm: a local package installed, and package scripts that clean up.
if command -v npm >/dev/null 2>&1; then
        repo
        mkdir -p "$WS/lp"
        printf '{"name": "lp", "version": "1.0.0", "main": "index.js"}\n' >"$WS/lp/package.json"
        echo 'module.exports = 42' >"$WS/lp/index.js"
        printf '{"name": "app", "version": "1.0.0", "scripts": {"build": "mkdir -p dist && echo x >dist/x",
  "clean": "rm -rf dist && git checkout -- docs"}}\n' >"$WS/package.json"
        printf 'node_modules/\ndist/\n' >>"$WS/.gitignore"
        git -C "$WS" add -A && git -C "$WS" commit -qm npm
        echo "scratch" >>"$WS/docs/b.txt"
        export HOME_NPM="$T/npmcache"
        same "npm install of a local package" 'npm install -s --offline --cache "$HOME_NPM" ./lp'
        is "$(cd "$WS" && node -e 'console.log(require("lp"))')" 42 "... and it is installed"
        same "npm run build, npm run clean (git checkout -- docs in a script)" 'npm run -s build && npm run -s clean'
else
        skip "npm workflows" "npm not installed"
fi

done_testing
