#!/bin/bash
# Escape suite, files: every way to write outside the workspace, to tamper with txbox's own
# state, or to make a commit do more than the program did.  Each attempt runs through txbox
# and must leave everything outside the workspace unchanged.
. "$(dirname "$0")/lib.sh"

new_ws
is "$(tx run -- echo alive 2>&1)" alive "txbox runs here (the attempts below are meaningful)"
echo keep >"$T/victim"
mkdir -p "$T/victimdir" && echo keep >"$T/victimdir/a"
outside() { printf '%s|%s' "$(cat "$T/victim")" "$(ls -A "$T/victimdir" | tr '\n' ' ')"; }
base=$(outside)

tx run -- sh -c "echo pwn >'$T/victim'" >/dev/null 2>&1
is "$(outside)" "$base" "an absolute path outside is read-only"
tx run -- sh -c "echo pwn >../victim; echo pwn >'$WS/../victimdir/new'" >/dev/null 2>&1
is "$(outside)" "$base" "'..' out of the workspace is read-only"
tx run -- sh -c "echo pwn >/proc/self/root$T/victim; echo pwn >/proc/1/cwd/victim; echo pwn >/proc/1/root$T/victim" >/dev/null 2>&1
is "$(outside)" "$base" "/proc/self/root and /proc/1/cwd lead nowhere writable"

# A descriptor the caller left open on a directory of the host's (writable) mount.
tx run -- sh -c 'echo pwn >/proc/self/fd/7/victim; echo pwn >/dev/fd/7/victim' 7<"$T" >/dev/null 2>&1
python3 -c '
import os, subprocess, sys
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
os.set_inheritable(fd, True)
code = "import os\ntry:\n    f = os.open(\"victim\", os.O_WRONLY | os.O_TRUNC, dir_fd=%d); os.write(f, b\"pwn\"); print(\"WROTE\")\nexcept OSError as e: print(\"refused\", e)" % fd
subprocess.run([sys.argv[2], "-C", sys.argv[3], "run", "--", "python3", "-c", code], close_fds=False)
' "$T" "$TXBOX" "$WS" >"$T/fd.out" 2>&1
ok "an inherited directory descriptor does not reach the host ($(tail -1 "$T/fd.out"))" test -z "$(grep WROTE "$T/fd.out")"
is "$(outside)" "$base" "... and nothing changed outside"

# A symlink to the outside, planted by an earlier transaction or already in the workspace.
tx run -- ln -s "$T/victim" "$WS/evil" >/dev/null 2>&1
ln -sfn "$T/victim" "$WS/evil2"
ln -sfn "$T/victimdir" "$WS/evildir"
tx run -- sh -c 'echo pwn >evil; echo pwn >evil2; echo pwn >evildir/new; rm -f evildir/a' >/dev/null 2>&1
tx run --commit=auto -- sh -c 'echo pwn >>evil2' >/dev/null 2>&1
is "$(outside)" "$base" "writing through planted symlinks changes nothing outside"
# A hard link to a file outside (same filesystem): the commit replaces the link, not the file.
out=$(tx run -- sh -c "ln '$T/victim' hard2 && echo linked" 2>&1)
ok "a hard link to a file outside cannot be made from inside" test -z "$(printf '%s' "$out" | grep linked)"
ln "$T/victim" "$WS/hard"
tx run -- sh -c 'echo pwn >>hard' >/dev/null 2>&1
is "$(outside)" "$base" "writing through a planted hard link changes nothing outside"
rm -f "$WS/hard" "$WS/evil" "$WS/evil2" "$WS/evildir"

# txbox's own state: the transactions and the audit log.
state="$HOME/.local/state/txbox"
tx run -- true
n0=$(tx log --json | grep -o '"tx"' | wc -l)
sum0=$(find "$state" -type f -name '*.db*' -exec cat {} + 2>/dev/null | sha256sum)
tx run -- sh -c "ls -A '$state'; rm -rf '$state'; echo x >'$state/x'; find '$T' -name '*.db' 2>/dev/null" >"$T/st.out" 2>&1
ok "the state dir is invisible and untouchable" test -z "$(grep -v -e 'No such file' -e 'Read-only' -e 'Permission denied' -e '^rm:' "$T/st.out")"
ok "no file appeared in the state dir" test ! -e "$state/x"
is "$(tx log --json | grep -o '"tx"' | wc -l)" "$((n0 + 1))" "the audit log has just the new record"

# Device nodes and setuid files.
out=$(tx run -- sh -c 'mknod null2 c 1 3 && echo made' 2>&1)
ok "device nodes cannot be created" test -z "$(printf '%s' "$out" | grep made)"
ok "... and none reaches the workspace" test ! -e "$WS/null2"
tx run -- sh -c 'cp /bin/true suid && chmod 6755 suid' >/dev/null 2>&1
ok "a setuid/setgid file is never committed" test ! -u "$WS/suid" -a ! -g "$WS/suid"
rm -f "$WS/suid"

# ---- the home: the agents' credentials and the caches ----
mkdir -p "$HOME/.claude" "$HOME/.codex" "$T/dots"
echo SECRET-oauth >"$HOME/.claude/.credentials.json"
echo SECRET-codex >"$HOME/.codex/auth.json"
echo SECRET-json >"$T/dots/claude.json"
ln -sfn "$T/dots/claude.json" "$T/dots/link1" && ln -sfn "$T/dots/link1" "$HOME/.claude.json" # a chain
ln -sfn "$HOME/.claude/.credentials.json" "$WS/creds"        # a link in the workspace
# grep -r SECRET ~ is a key hunt the policy refuses before the run (secret-access); this
# test is of the sandbox, so a policy of the user's lets the hunt run into it.
printf 'version: 1\nrules:\n  - id: let-hunts-reach-the-sandbox\n    decision: allow\n    program: "@key-hunt"\n' >"$T/hunt.yml"
out=$(tx --policy "$T/hunt.yml" run -- sh -c "cat creds ~/.claude.json $T/dots/claude.json /proc/self/root$HOME/.codex/auth.json;
        cat /proc/1/root$HOME/.claude/.credentials.json; find ~ -name '*.json' -exec cat {} +;
        grep -r SECRET ~ /proc/self/cwd/creds; echo end" 2>&1)
like "$out" "end" "the credential reads ran"
ok "the agents' credentials are unreadable: direct, through a link chain, a workspace link, /proc/*/root, find" \
        sh -c "! printf '%s' '$out' | grep -q 'SECRET-'"
rm -f "$WS/creds"
# A link planted in a cache to a credential: a later run reads the mask, the host nothing new.
tx run -- sh -c "mkdir -p ~/.cache && ln -sfn ~/.codex/auth.json ~/.cache/key && ln -sfn '$T/victim' ~/.cache/v" >/dev/null 2>&1
out=$(tx run -- sh -c 'cat ~/.cache/key; echo pwn >~/.cache/v; echo end' 2>&1)
ok "a link left in a cache leads to the mask, not the credential" sh -c "! printf '%s' '$out' | grep -q SECRET"
is "$(outside)" "$base" "... and writing through a cached link to the outside changes nothing"
out=$(tx run -- sh -c 'mv ~/.cache ~/.cache2; rmdir ~/.cache; mv ~/.cache/.. /tmp/h; echo end' 2>&1)
ok "a cache mount cannot be moved or removed" test -d "$HOME/.cache" -a ! -e "$HOME/.cache2"
tx run -- sh -c 'cp /bin/true ~/.cache/suid && chmod 6755 ~/.cache/suid' >/dev/null 2>&1
ok "a set-user-ID file left in a cache lies in a root closed to others" \
        test "$(stat -c %a "$HOME/.cache/txbox/caches")" = 700
out=$(tx run -- sh -c 'ls -A ~/.cache/txbox; echo pwn >~/.cache/txbox/caches/x; echo end' 2>&1)
ok "the cache root itself is not reachable from a cache" test ! -e "$HOME/.cache/txbox/caches/x"

# Forged overlay xattrs: the commit deletes only what the program deleted.
if command -v setfattr >/dev/null; then
        before=$(ls -A "$WS/docs" | tr '\n' ' ')
        tx run -- sh -c 'setfattr -n user.overlay.opaque -v y docs; setfattr -n trusted.overlay.opaque -v y docs;
                         touch docs/new; setfattr -n user.overlay.whiteout -v y docs/new' >/dev/null 2>&1
        like "$(ls -A "$WS/docs" | tr '\n' ' ')" "^a.txt b.txt" "a forged opaque xattr deletes nothing"
        ok "lower files survive the forged xattrs" test -f "$WS/docs/a.txt" -a -f "$WS/docs/b.txt"
        : "$before"
else
        skip "forged overlay xattrs" "setfattr is not installed"
        skip "forged overlay xattrs (lower files)" "setfattr is not installed"
fi
python3 - "$WS" <<'EOF' >/dev/null 2>&1
EOF
out=$(tx run -- python3 -c '
import os
try:
    os.setxattr("src", "user.overlay.opaque", b"y"); print("set")
except OSError as e:
    print("refused", e.errno)
open("src/extra", "w").write("x")' 2>&1)
ok "opaque xattr through python: src/main.c survives ($out)" test -f "$WS/src/main.c"

done_testing
