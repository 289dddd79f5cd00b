#!/bin/bash
# Escape suite, directory renames: txbox completes rename(2) of a directory of the lower
# layer for the program (src/lib/sandbox/rename.c), through a helper in the sandbox with
# the program's own privileges.  Each attempt tries to make that helper do more than the
# program could: reach out of the workspace, into /proc or txbox's state, into read-only
# places; race it with symlink swaps; read or signal it; cut a rename in half and get the
# half committed; outgrow the limits.  Everything outside must stay as it was, and the
# workspace must end up either as before or as after a whole rename.
. "$(dirname "$0")/lib.sh"

printf 'version: 1\ndefaults: false\nrules: []\n' >"$T/allow-all.yml"
cat >"$T/rn.py" <<'EOF'
# rn.py OLD NEW [FLAGS] ...: renameat2 each pair, print 0 or the error (never raises).
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
a = sys.argv[1:]
for i in range(0, len(a), 3):
    r = libc.renameat2(-100, a[i].encode(), -100, a[i + 1].encode(), int(a[i + 2]))
    print(0 if r == 0 else os.strerror(ctypes.get_errno()))
EOF
new_ws
mkdir -p "$WS/tree/a/b"
for i in $(seq 1 50); do echo "$i" >"$WS/tree/a/f$i"; done
is "$(tx run -- python3 -c 'print(1)' 2>&1)" 1 "txbox runs here (the attempts below are meaningful)"
state="$HOME/.local/state/txbox"
echo keep >"$T/victim"
mkdir -p "$T/victimdir/sub" && echo keep >"$T/victimdir/a"
outside() { (cd "$T" && find victim victimdir -printf '%p %y %m %s\n' | LC_ALL=C sort && cat victim victimdir/a) | sha256sum; }
base=$(outside)
orig=$(tree_hash "$WS")
undo_last() { # undo the newest run if it committed (never an older one)
        tx log --json -n 1 | grep -q '"outcome": *"committed"' && tx undo >/dev/null 2>&1
        return 0
}
whole() { # the workspace is as before ($orig), or as after the whole rename tree -> $1
        local h
        h=$(tree_hash "$WS")
        [ "$h" = "$orig" ] && return 0
        [ ! -e "$WS/tree" ] && [ "$(ls "$WS/$1/a" | wc -l)" = 51 ] && [ -z "$(find "$WS" -name '.txbox-rename-*')" ]
}

# ---- names that lead out of the workspace ----
ln -s "$T/victimdir" "$WS/out"
out=$(tx run -- python3 "$T/rn.py" tree out/moved 0 out/sub tree/x 0 tree/a/b /proc/x 0 tree "$state/x" 0 \
        tree /usr/x 0 /usr/lib tree/x 0 tree /proc/self/root"$T"/victimdir/y 0 2>&1)
is "$(printf '%s' "$out" | grep -c '^0$')" 0 "renames out of the workspace, into /proc, the state dir, /usr all fail ($(echo $out))"
is "$(outside)" "$base" "... and nothing outside changed"
ok "... nor the state dir" test ! -e "$state/x"
rm -f "$WS/out"
is "$(tree_hash "$WS")" "$orig" "... and the workspace is as before"

# ---- renames of / and of the workspace itself ----
out=$(tx run -- python3 "$T/rn.py" / /x 0 "$WS" "$WS.x" 0 . x 0 .. x 0 tree/. x 0 2>&1)
is "$(printf '%s' "$out" | grep -c '^0$')" 0 "renames of /, of the workspace, of . and .. fail ($(echo $out))"
ok "... and the workspace is where it was" test ! -e "$WS.x" -a -d "$WS/tree/a"

# ---- through /proc: where the program itself could go, no further ----
out=$(tx run --commit=discard -- python3 "$T/rn.py" tree /proc/self/cwd/t2 0 t2 /proc/self/root"$WS"/t3 0 \
        t3 /proc/1/root"$WS"/t4 0 2>&1)
is "$out" "0
0
Permission denied" "through /proc/self/cwd and /proc/self/root: in the workspace, as for the program; init's /proc/1/root is closed to both"
out=$(tx run -- sh -c "python3 '$T/rn.py' tree /proc/self/root$T/victimdir/z 0" 2>&1)
is "$(outside)" "$base" "through /proc/self/root to the outside: nothing outside changed ($out)"

# ---- racing symlink swaps ----
# One thread keeps making p a directory of the workspace, then a link out of it, into
# /proc, into the state dir; the other renames p/a back and forth, each rename one the
# helper completes (a, a directory of the lower layer) or the kernel refuses.
cat >"$T/race.py" <<'EOF'
import os, sys, threading, time
T, state = sys.argv[1], sys.argv[2]
targets = ["tree", T + "/victimdir", "/proc/self/root" + T + "/victimdir", state, "/proc/1/cwd/tree", "tree"]
stop = time.time() + 2
def swap():
    i = 0
    while time.time() < stop:
        try:
            os.symlink(targets[i % len(targets)], "p.new"); os.rename("p.new", "p")
        except OSError:
            pass
        i += 1
threading.Thread(target=swap, daemon=True).start()
n = 0
while time.time() < stop:
    for a, b in (("p/a", "p/a2"), ("p/a2", "p/a"), ("p/a", "p/sub/a")):
        try:
            os.rename(a, b); n += 1
        except OSError:
            pass
print("renames", n)
EOF
out=$(tx --policy "$T/allow-all.yml" run --commit=discard -- python3 "$T/race.py" "$T" "$state" 2>&1)
like "$out" "^renames [0-9]+" "a program swapping symlinks under its own renames ran ($out)"
is "$(outside)" "$base" "... and nothing outside the workspace changed"
ok "... nor in the state dir" test -z "$(find "$state" -name 'a' -o -name 'a2' -o -name 'sub' 2>/dev/null)"
out=$(tx --policy "$T/allow-all.yml" run -- python3 "$T/race.py" "$T" "$state" 2>&1)
is "$(outside)" "$base" "the same, committed: nothing outside changed"
ok "... and no temporary name was committed" test -z "$(find "$WS" -name '.txbox-rename-*')"
undo_last
is "$(tree_hash "$WS")" "$orig" "undo puts the workspace back"

# ---- the helper's memory and signals ----
# While a rename runs, the program looks for processes not its own (the helper's parent is
# outside the sandbox: PPid 0) and tries to read their memory and environment, to attach
# to them, to kill them.  Killing may work (it is the program's uid) unless Landlock scopes
# signals: then the rename was cut short and the run is rolled back.
for i in $(seq 1 2000); do echo "$i" >"$WS/tree/a/b/g$i"; done
orig=$(tree_hash "$WS")
cat >"$T/peek.py" <<'EOF'
import ctypes, os, threading, time
libc = ctypes.CDLL(None, use_errno=True)
seen = []
def peek():
    deadline = time.time() + 3
    while time.time() < deadline and not seen:
        for p in os.listdir("/proc"):
            if not p.isdigit() or int(p) in (1, os.getpid()):
                continue
            try:
                st = open("/proc/%s/status" % p).read()
            except OSError:
                continue
            if "\nPPid:\t0\n" not in st:
                continue
            res = []
            for f in ("mem", "environ", "cwd/.", "root/."):
                try:
                    if f.endswith("/."):
                        os.listdir("/proc/%s/%s" % (p, f[:-2]))
                    else:
                        open("/proc/%s/%s" % (p, f), "rb").read(16)
                    res.append(f + ":READ")
                except OSError as e:
                    res.append(f + ":" + str(e.errno))
            r = libc.ptrace(16, int(p), 0, 0)  # PTRACE_ATTACH
            res.append("attach:" + ("OK" if r == 0 else "refused"))
            try:
                os.kill(int(p), 9); res.append("kill:OK")
            except OSError:
                res.append("kill:refused")
            seen.append(" ".join(res))
t = threading.Thread(target=peek)
t.start()
try:
    os.rename("tree", "moved")
except OSError as e:
    print("rename:", e.strerror)
t.join()
print("helper:", seen[0] if seen else "not seen")
EOF
out=$(tx --policy "$T/allow-all.yml" run -- python3 "$T/peek.py" 2>&1)
rc=$?
like "$out" "helper: " "a program looked for the helper while it renamed ($(echo $out))"
ok "it could not read the helper's memory, environment, cwd or root, nor attach to it" \
        test -z "$(printf '%s' "$out" | grep -e ':READ' -e 'attach:OK')"
ok "the workspace is as before or as after the whole rename (status $rc)" whole moved
if printf '%s' "$out" | grep -q 'kill:OK' && [ "$rc" -ne 0 ]; then
        like "$out" "directory renames|EXDEV|cross-device" "... a killed helper made the run fail, naming why"
fi
undo_last
is "$(tree_hash "$WS")" "$orig" "the workspace is back as it was"

# ---- half a rename is never committed ----
# Another thread ends the process while the rename is being completed: the call never
# returns, and what the layer holds then is not the program's to commit.
cat >"$T/cut.py" <<'EOF'
import os, threading, time
threading.Thread(target=lambda: os.rename("tree", "moved"), daemon=True).start()
time.sleep(float(os.environ.get("CUT_AFTER", "0.02")))
os._exit(0)
EOF
for after in 0.005 0.02 0.05 0.2; do
        out=$(CUT_AFTER=$after tx --policy "$T/allow-all.yml" run -- python3 "$T/cut.py" 2>&1)
        rc=$?
        ok "exit after ${after}s of a rename (status $rc): the workspace is before or after it, whole" whole moved
        if [ "$rc" -eq 125 ]; then
                like "$out" "rolled back tx [0-9a-f]+: the program ended while txbox was completing one of its directory renames" \
                        "... and the rollback says why"
        fi
        undo_last
        is "$(tree_hash "$WS")" "$orig" "... back as it was"
done

# ---- hidden paths inside the tree: a mount the copy must not cross ----
# A hidden directory (TXBOX_HIDE) or file inside a directory of the lower layer is a mount
# of the sandbox's (an empty read-only tmpfs, /dev/null).  Completing a rename of the
# directory around it would copy the mask, not what it hides, and leave the hidden part
# behind: the rename fails as the kernel has it (EXDEV), and so does one over or into it.
mkdir -p "$WS/hid/secret" "$WS/hid2/dir" && echo s3cr3t >"$WS/hid/secret/k" && echo s3cr3t >"$WS/hid2/key"
echo x >"$WS/hid/plain" && echo x >"$WS/hid2/plain"
orig=$(tree_hash "$WS")
out=$(TXBOX_HIDE="$WS/hid/secret:$WS/hid2/key" tx --policy "$T/allow-all.yml" run -- \
        python3 "$T/rn.py" hid moved 0 hid2 moved2 0 tree hid/secret 0 tree hid/secret/x 0 2>&1)
is "$(echo $out)" "Invalid cross-device link Invalid cross-device link Device or resource busy Invalid cross-device link" \
        "renames of directories holding a hidden directory or file, over and into a hidden one, fail"
is "$(tree_hash "$WS")" "$orig" "... and the workspace is as before (the hidden content where it was)"
ok "... no copy of a mask was left or committed" test -z "$(find "$WS" -name '.txbox-rename-*')"
undo_last
rm -rf "$WS/hid" "$WS/hid2"
orig=$(tree_hash "$WS")

# ---- limits: a huge tree is the disk and files limits' business, and the timeout ends it ----
out=$("$TXBOX" -C "$WS" --policy "$T/allow-all.yml" run --max-files=500 -- \
        python3 -c 'import os, time; os.rename("tree", "moved"); time.sleep(1)' 2>&1)
rc=$?
ok "a rename of 2050 entries under --max-files=500: stopped (status $rc)" test "$rc" -eq 137
like "$out" "stopped at its files limit" "... naming the files limit"
is "$(tree_hash "$WS")" "$orig" "... and nothing was committed"
dd if=/dev/urandom of="$WS/tree/a/b/big1" bs=1M count=3 status=none
dd if=/dev/urandom of="$WS/tree/a/b/big2" bs=1M count=3 status=none
orig=$(tree_hash "$WS")
out=$("$TXBOX" -C "$WS" --policy "$T/allow-all.yml" run --max-disk=4M -- \
        python3 -c 'import os, time; os.rename("tree", "moved"); time.sleep(1)' 2>&1)
rc=$?
ok "a rename that copies 6 MiB under --max-disk=4M: stopped or refused (status $rc)" test "$rc" -ne 0
is "$(tree_hash "$WS")" "$orig" "... and nothing was committed"
"$TXBOX" -C "$WS" --policy "$T/allow-all.yml" run --timeout=0.3 -- \
        python3 -c 'import os, time; os.rename("tree", "moved"); time.sleep(30)' >/dev/null 2>&1
is "$?" 124 "a rename and then a long sleep end at --timeout"
is "$(tree_hash "$WS")" "$orig" "... rolled back"
is "$(outside)" "$base" "and nothing outside changed in all of this"

done_testing
