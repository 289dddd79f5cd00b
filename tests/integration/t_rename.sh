#!/bin/bash
# Directory renames inside the sandbox (issue 30): the overlay cannot move a directory of
# its lower layer (EXDEV), so txbox completes rename(2) for the program.  Each case runs
# through txbox and is compared with the same command run without it, on a twin of the
# workspace: git mv of a 250-file directory, Python's os.rename, what a tree keeps (hard
# links, symlinks, modes, times, xattrs), nested renames, renames over an empty directory,
# RENAME_NOREPLACE and RENAME_EXCHANGE, the kernel's errors, rollback and undo.
. "$(dirname "$0")/lib.sh"

# renameat2 for the cases Python has no word for: rn2.py OLD NEW FLAGS... prints 0 or the
# error of each.
cat >"$T/rn2.py" <<'EOF'
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
for i in range(1, len(sys.argv), 3):
    r = libc.renameat2(-100, sys.argv[i].encode(), -100, sys.argv[i + 1].encode(), int(sys.argv[i + 2]))
    print(0 if r == 0 else os.strerror(ctypes.get_errno()))
EOF

git_ws() { # a workspace that is a git repository with src/ of 250 files, committed
        new_ws
        mkdir -p "$WS/big/deep/er"
        for i in $(seq 1 250); do printf 'file %s\n' "$i" >"$WS/big/f$i.c"; done
        echo deep >"$WS/big/deep/er/d.txt"
        git -C "$WS" init -q && git -C "$WS" config user.email t@example.com && git -C "$WS" config user.name t
        git -C "$WS" add -A && git -C "$WS" commit -qm init
}
twin() { chmod -R u+rwX "$T/twin" 2>/dev/null; rm -rf "$T/twin"; cp -a "$WS" "$T/twin"; }
# (--no-optional-locks: a status that refreshes the index would write it, and an undo then
# finds .git/index changed outside txbox and refuses, rightly)
gstate() { (cd "$1" && git --no-optional-locks status --porcelain=v1 && git ls-files -s) 2>&1; }

# ---- git mv of a directory of 250 files ----
git_ws
twin
orig=$(tree_hash "$WS")
(cd "$T/twin" && git mv big lib)
out=$(tx run -- git mv big lib 2>&1)
is "$?" 0 "git mv of a 250-file directory succeeds in the sandbox"
is "$out" "" "... and says nothing"
ok "the directory moved" test -f "$WS/lib/f250.c" -a -f "$WS/lib/deep/er/d.txt" -a ! -e "$WS/big"
is "$(gstate "$WS")" "$(gstate "$T/twin")" "git status and the index are as without txbox"
is "$(tree_hash "$WS")" "$(tree_hash "$T/twin")" "the tree is as without txbox"
like "$(tx show --json "$(last_tx)")" '"outcome": "committed"' "committed, not judged a mass deletion"
ok "no temporary name was committed" test -z "$(find "$WS" -name '.txbox-rename-*')"
tx undo >/dev/null 2>&1
is "$?" 0 "undo of the commit"
is "$(tree_hash "$WS")" "$orig" "undo puts the tree back"
is "$(cd "$WS" && git --no-optional-locks status --porcelain=v1)" "" "and git sees a clean checkout again"

# ---- rollback: a rename, then the program fails ----
tx run -- sh -c 'git mv big lib && exit 3' >/dev/null 2>&1
is "$?" 3 "a failing program's status"
is "$(tree_hash "$WS")" "$orig" "its directory rename is rolled back: the workspace is unchanged"
tx run --commit=discard -- python3 -c 'import os; os.rename("big", "lib")' >/dev/null 2>&1
is "$(tree_hash "$WS")" "$orig" "a discarded rename leaves the workspace unchanged"

# ---- renaming back: in the same transaction, and in the next ----
out=$(tx run -- sh -c 'git mv big lib && git mv lib big && git --no-optional-locks status --porcelain=v1' 2>&1)
is "$?" 0 "git mv there and back in one command succeeds"
is "$out" "" "... and git sees no change"
is "$(tree_hash "$WS")" "$orig" "... and the committed tree is as before"
tx run -- mv big lib >/dev/null 2>&1
is "$?" 0 "coreutils mv of the directory"
ok "... moved" test -f "$WS/lib/f1.c" -a ! -e "$WS/big"
tx run -- python3 -c 'import os; os.rename("lib", "big")' >/dev/null 2>&1
is "$?" 0 "os.rename back in the next transaction (the moved directory is now of the lower layer)"
is "$(tree_hash "$WS")" "$orig" "... and the tree is as at first"
is "$(cd "$WS" && git --no-optional-locks status --porcelain=v1)" "" "... and git sees a clean checkout"

# ---- Python's os.rename, and what a tree keeps ----
new_ws
mkdir -p "$WS/t/sub/deep" "$WS/t/ro" "$WS/empty" "$WS/full"
printf 'alpha\n' >"$WS/t/a"
ln "$WS/t/a" "$WS/t/sub/hard"
ln -s ../a "$WS/t/sub/sym"
printf 'ro\n' >"$WS/t/ro/r"
echo x >"$WS/full/x"
chmod 0600 "$WS/t/a"
python3 -c 'import os, sys; os.setxattr(sys.argv[1], "user.k", b"dir"); os.setxattr(sys.argv[1] + "/a", "user.k", b"file")' "$WS/t"
chmod 0555 "$WS/t/sub"
chmod 0500 "$WS/t/ro"
chmod 0750 "$WS/t"
touch -h -d '2001-02-03 04:05:06' "$WS/t/sub/sym"
touch -d '2001-02-03 04:05:06' "$WS/t/sub/deep" "$WS/t/sub" "$WS/t/ro" "$WS/t"
twin
(cd "$T/twin" && python3 -c 'import os; os.rename("t", "moved")')
keeps() { # what the moved tree must keep, read on the host
        local d=$1
        printf '%s\n' "$(stat -c '%a %Y' "$d" "$d/sub" "$d/sub/deep" "$d/ro" "$d/a")" \
                "$(readlink "$d/sub/sym") $(stat -c %Y "$d/sub/sym")" \
                "$(python3 -c 'import os, sys; print(os.getxattr(sys.argv[1], "user.k"), os.getxattr(sys.argv[1] + "/a", "user.k"))' "$d")" \
                "$([ "$(stat -c %i "$d/a")" = "$(stat -c %i "$d/sub/hard")" ] && echo linked) $(stat -c %h "$d/a")"
}
out=$(tx run -- python3 -c 'import os; os.rename("t", "moved"); print(sorted(os.listdir("moved")))' 2>&1)
is "$out" "['a', 'ro', 'sub']" "os.rename of a directory works in the sandbox"
is "$(keeps "$WS/moved")" "$(keeps "$T/twin/moved")" "modes, times, xattrs, symlinks and hard links are kept"
is "$(tree_hash "$WS")" "$(tree_hash "$T/twin")" "the tree is as without txbox"

# ---- in the sandbox's own view: FIFOs and sockets, and the kernel's errors ----
mkfifo "$WS/moved/fifo"
python3 -c 'import socket, sys; s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' "$WS/moved/sock"
out=$(tx run --commit=discard -- sh -c 'mv -T moved m2 2>/dev/null; python3 -c "import os; os.rename(\"m2\", \"m3\")" &&
        test -p m3/fifo && test -S m3/sock && test -L m3/sub/sym && test "$(cat m3/sub/hard)" = alpha && echo kept' 2>&1)
is "$out" "kept" "a FIFO and a socket move with their directory (seen inside; the effect rules judge them)"
rm -f "$WS/moved/fifo" "$WS/moved/sock"
errs=$(tx run --commit=discard -- python3 "$T/rn2.py" moved full 0 moved README 0 moved empty 1 \
        moved moved/sub/x 0 nothing x 0 2>&1)
is "$errs" "Directory not empty
Not a directory
File exists
Invalid argument
No such file or directory" "the kernel's own errors: ENOTEMPTY, ENOTDIR, EEXIST (noreplace), EINVAL, ENOENT"

# ---- nested renames, over an empty directory, NOREPLACE, EXCHANGE ----
mkdir -p "$WS/n/inner" "$WS/x1" "$WS/x2"
echo i >"$WS/n/inner/i"
echo t >"$WS/n/top"
echo 1 >"$WS/x1/one"
echo 2 >"$WS/x2/two"
twin
steps="n/inner inner2 0 n n2 0 moved empty 0 docs docs2 1 x1 x2 2"
(cd "$T/twin" && python3 "$T/rn2.py" $steps) >"$T/twin.out" 2>&1
out=$(tx run -- python3 "$T/rn2.py" $steps 2>&1)
is "$out" "$(cat "$T/twin.out")" "nested renames, over an empty directory, noreplace and exchange answer as without txbox"
is "$(tree_hash "$WS")" "$(tree_hash "$T/twin")" "... and leave the same tree"
ok "the exchange swapped the two directories" test -f "$WS/x1/two" -a -f "$WS/x2/one"

# ---- files and directories the program made itself: the kernel moves them, as before ----
out=$(tx run -- sh -c 'mkdir fresh && echo f >fresh/f && python3 -c "import os; os.rename(\"fresh\", \"fresh2\"); os.rename(\"README\", \"README2\")" && cat fresh2/f README2' 2>&1)
is "$out" "f
hello" "renames of files and of new directories are the kernel's own"
ok "and are committed" test -f "$WS/fresh2/f" -a -f "$WS/README2" -a ! -e "$WS/README"

# ---- one listener for renames, connects and exec checks ----
# Threads of one program connect to its own unix socket in /tmp (the supervisor makes each
# connect), run programs (each exec checked) and rename directories of the lower layer (the
# helper completes them), all at once: every call is answered, each by its own handler.
for i in $(seq 1 20); do mkdir -p "$WS/d$i/s" && echo "$i" >"$WS/d$i/s/f"; done
cat >"$T/both.py" <<'EOF'
import os, socket, subprocess, threading
path = "/tmp/b.sock"
s = socket.socket(socket.AF_UNIX); s.bind(path); s.listen(64)
def serve():
    while True:
        a, _ = s.accept(); a.send(a.recv(10).upper()); a.close()
threading.Thread(target=serve, daemon=True).start()
got = {"conn": 0, "exec": 0}
def conn():
    for i in range(200):
        c = socket.socket(socket.AF_UNIX); c.connect(path); c.send(b"ping")
        got["conn"] += c.recv(10) == b"PING"; c.close()
def run():
    for i in range(20):
        got["exec"] += subprocess.run(["true"]).returncode == 0
ts = [threading.Thread(target=conn), threading.Thread(target=run)]
for t in ts: t.start()
for i in range(1, 21):
    os.rename("d%d" % i, "e%d" % i)
for t in ts: t.join()
print(got["conn"], got["exec"], sorted(os.listdir("e20")))
EOF
out=$(tx run --timeout=60 -- python3 "$T/both.py" 2>&1)
is "$out" "200 20 ['s']" "200 connects, 20 checked execs and 20 directory renames at once: all answered"
ok "... and the renames committed" test -f "$WS/e1/s/f" -a -f "$WS/e20/s/f" -a ! -e "$WS/d1"

# ---- a rename of a directory whose parent is read-only: refused as on the host ----
mkdir -p "$WS/lock/inside"
chmod 0555 "$WS/lock"
out=$(tx run -- python3 -c 'import os
try: os.rename("lock/inside", "out"); print("moved")
except OSError as e: print(e.strerror)' 2>&1)
is "$out" "Permission denied" "a directory in a read-only directory cannot be moved out (EACCES, the kernel's)"
chmod 0755 "$WS/lock"

# ---- faithful or not at all: a directory whose owner the program could not give the copy ----
if [ "$(id -u)" -eq 0 ]; then
        mkdir -p "$WS/theirs/d" && echo x >"$WS/theirs/d/f" && chown -R 54321:54321 "$WS/theirs"
        out=$(tx run --commit=discard -- python3 -c 'import os
try: os.rename("theirs", "mine"); print("moved")
except OSError as e: print(e.strerror)' 2>&1)
        is "$out" "Invalid cross-device link" "root without capabilities cannot move another user's directory: EXDEV as before"
        rm -rf "$WS/theirs"
else
        skip "another user's directory" "needs root (every id mapped)"
fi

done_testing
