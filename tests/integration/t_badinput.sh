#!/bin/bash
# Bad input: each gets one clear line naming the path and what to do, and the workspace is
# never left half-changed.
. "$(dirname "$0")/lib.sh"

new_ws
orig=$(tree_hash "$WS")

err=$("$TXBOX" -C "$T/nope" run -- true 2>&1)
is "$?" 125 "missing workspace: 125"
like "$err" "^txbox: workspace '$T/nope' does not exist; create it or pass -C DIR$" "missing workspace: named"

err=$(tx --state "$WS/.state" run -- true 2>&1)
is "$?" 125 "state dir inside the workspace: 125"
like "$err" "state dir '$WS/.state' is inside the workspace" "state dir inside the workspace: named"
ok "state dir inside the workspace: not created" test ! -e "$WS/.state"

# Another filesystem: the user jail's /tmp is a tmpfs; as root, mount one.
other=""
if [ "$JAIL_MODE" = root ]; then
        mkdir -p "$T/otherfs" && mount -t tmpfs -o size=4m none "$T/otherfs" && other="$T/otherfs"
elif [ "$(stat -f -c %T /tmp)" != "$(stat -f -c %T "$T")" ] && [ -w /tmp ]; then
        other=/tmp
fi
if [ -n "$other" ]; then
        err=$(tx --state "$other/state" run -- true 2>&1)
        is "$?" 125 "state dir on another filesystem: 125"
        like "$err" "state dir '$other/state' is on another filesystem or mount than workspace '$WS'; commits are renames, so pass --state DIR on the workspace's mount" "state dir on another filesystem: named, with what to do"
else
        skip "state dir on another filesystem" "no second writable filesystem here"
        skip "state dir on another filesystem: message" "no second writable filesystem here"
fi

err=$(tx run --commit=sometimes -- true 2>&1)
is "$?" 125 "bad --commit value: 125"
like "$err" "^txbox: --commit=sometimes: expected auto, keep or discard$" "bad --commit value: named"
err=$(tx run 2>&1)
is "$?" 125 "run without a program: 125"
err=$(tx frobnicate 2>&1)
is "$?" 2 "unknown verb: 2"
like "$err" "unknown verb 'frobnicate'" "unknown verb: named"

# A corrupt audit database.
tx run -- true
db=$(ls "$HOME"/.local/state/txbox/*/audit.db)
cp "$db" "$T/good.db"
rm -f "$db-wal" "$db-shm"
head -c 4096 /dev/urandom >"$db"
err=$(tx run -- sh -c 'echo x >corrupt.txt' 2>&1)
is "$?" 125 "corrupt audit database: 125"
like "$err" "audit database '$db' is unreadable.*mv '$db' '$db.bad'" "corrupt audit database: named, with what to do"
ok "corrupt audit database: nothing ran" test ! -e "$WS/corrupt.txt"
mv "$db" "$db.bad"
ok "after moving it aside, transactions run again" tx run -- sh -c 'echo y >after.txt'
rm -f "$WS/after.txt"

# A locked audit database: another process holds its write lock past the busy timeout.
db=$(ls "$HOME"/.local/state/txbox/*/audit.db)
(echo 'BEGIN EXCLUSIVE;'; sleep 3; echo 'COMMIT;') | sqlite3 "$db" &
locker=$!
sleep 0.5
err=$(TXBOX_DB_BUSY_MS=300 "$TXBOX" -C "$WS" run -- sh -c 'echo x >locked.txt' 2>&1)
is "$?" 125 "locked audit database: 125"
like "$err" "audit database '$db' stayed locked by another process" "locked audit database: named, with what to do"
ok "locked audit database: nothing ran" test ! -e "$WS/locked.txt"
wait "$locker"
ok "after the lock is released, transactions run again" tx run -- sh -c 'echo y >unlocked.txt'
rm -f "$WS/unlocked.txt"

# A full disk during commit: keep a change pending, fill the filesystem, then commit.
if [ "$JAIL_MODE" = root ]; then
        small="$T/small"
        mkdir -p "$small" && mount -t tmpfs -o size=1m none "$small" && mkdir -p "$small/ws" "$small/state"
        printf 'one\n' >"$small/ws/a"
        "$TXBOX" -C "$small/ws" --state "$small/state" run --commit=keep -- sh -c 'for i in $(seq 1 50); do echo "$i" >"f$i"; done; echo two >a' 2>/dev/null
        id=$("$TXBOX" -C "$small/ws" --state "$small/state" log --json -n 1 | sed -n 's/^\[{"tx": *"\([0-9a-f]*\)".*/\1/p')
        before=$(tree_hash "$small/ws")
        dd if=/dev/zero of="$small/fill" bs=4k 2>/dev/null
        err=$("$TXBOX" -C "$small/ws" --state "$small/state" commit "$id" 2>&1)
        ok "full disk during commit: the commit fails" test $? -ne 0
        like "$err" "[Nn]o space left on device" "full disk during commit: says so"
        is "$(tree_hash "$small/ws")" "$before" "full disk during commit: workspace unchanged"
        rm -f "$small/fill"
        # Its layer was prepared for the commit (overlay's markers taken out): it can never be
        # judged again, so the failed commit rolled it back rather than leave it pending.
        like "$err" "was rolled back, nothing of it applied" "full disk during commit: the pending tx is rolled back"
        like "$("$TXBOX" -C "$small/ws" --state "$small/state" log --json -n 1)" '"outcome": *"rolled_back"' \
                "full disk during commit: ... and its row says so"
        ok "full disk during commit: the command runs and commits again once there is room" \
                "$TXBOX" -C "$small/ws" --state "$small/state" run -- sh -c 'for i in $(seq 1 50); do echo "$i" >"f$i"; done; echo two >a'
        is "$(cat "$small/ws/a")" "two" "full disk during commit: then applied whole"
        umount "$small"
else
        skip "full disk during commit" "needs root to mount a small filesystem"
fi

# Several txbox processes committing at once (disjoint files): all commit, none lost.
for i in 1 2 3 4; do "$TXBOX" -C "$WS" run -- sh -c "echo $i >par$i.txt" & done
wait
n=$(ls "$WS"/par*.txt 2>/dev/null | wc -l)
is "$n" 4 "four concurrent transactions all committed"
is "$(tx log --json | grep -oE '"par[1-4].txt"\], "modified": \[\], "deleted": \[\]' | wc -l)" 4 "the log records each of them with its file"
rm -f "$WS"/par*.txt

# A workspace entry whose group is unmapped in the unprivileged sandbox.
if [ -d "$T/unmapped" ] && [ "$(id -u)" -ne 0 ]; then
        before=$(tree_hash "$T/unmapped")
        err=$("$TXBOX" -C "$T/unmapped" run -- sh -c 'echo more >>grpfile' 2>&1)
        rc=$?
        ok "unmapped owner: the write fails" test "$rc" -ne 0
        like "$err" "warning: workspace entries owned by ids the sandbox cannot map.*'grpfile \(uid [0-9]+, gid [0-9]+\)'.*chown them to yourself or run txbox as root" "unmapped owner: named, with what to do"
        is "$(tree_hash "$T/unmapped")" "$before" "unmapped owner: workspace unchanged"
else
        skip "unmapped owner" "only as an unprivileged user (root maps every id)"
fi

# Overlay refused: a workspace and state dir on an overlayfs (as inside many containers).
if [ "$JAIL_MODE" = root ]; then
        mkdir -p "$T/ovl/l" "$T/ovl/u" "$T/ovl/w" "$T/ovl/m"
        if mount -t overlay overlay -o "lowerdir=$T/ovl/l,upperdir=$T/ovl/u,workdir=$T/ovl/w" "$T/ovl/m"; then
                mkdir -p "$T/ovl/m/ws" "$T/ovl/m/state"
                err=$("$TXBOX" -C "$T/ovl/m/ws" --state "$T/ovl/m/state" run -- sh -c 'echo x >x' 2>&1)
                rc=$?
                if [ $rc -eq 125 ]; then
                        like "$err" "^txbox: sandbox setup failed: cannot mount an overlay on '$T/ovl/m/ws'" "workspace on overlayfs: refused with a clear line"
                else
                        is "$(cat "$T/ovl/m/ws/x" 2>/dev/null)" "x" "workspace on overlayfs: works on this kernel"
                fi
                umount "$T/ovl/m"
        else
                skip "workspace on overlayfs" "cannot mount an overlay here"
        fi
else
        skip "workspace on overlayfs" "needs root to mount an overlay"
fi

# A mount inside the workspace cannot be part of the overlay: refused.
if [ "$JAIL_MODE" = root ]; then
        mkdir -p "$WS/mnt" && mount -t tmpfs none "$WS/mnt"
        err=$(tx run -- sh -c 'echo x >mnt/x' 2>&1)
        is "$?" 125 "a mount inside the workspace: 125"
        like "$err" "^txbox: workspace '$WS' has a mount point inside it at '$WS/mnt'" "a mount inside the workspace: named"
        umount "$WS/mnt" && rmdir "$WS/mnt"
        # A server checks before every command: a mount made between two is seen.
        call() { echo "{\"jsonrpc\":\"2.0\",\"id\":$1,\"method\":\"tools/call\",\"params\":{\"name\":\"run_command\",\"arguments\":{\"command\":\"echo $1 >m$1.txt\"}}}"; }
        {
                echo '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"sh","version":"1"}}}'
                call 1
                sleep 1
                mkdir -p "$WS/mnt" && mount -t tmpfs none "$WS/mnt"
                call 2
                sleep 1
                umount "$WS/mnt" && rmdir "$WS/mnt"
                call 3
        } | tx mcp >"$T/mcp.out" 2>/dev/null
        is "$(grep -c '"status": *0' "$T/mcp.out")" 2 "mcp: the commands before the mount and after it ran"
        like "$(grep '"id": *2' "$T/mcp.out")" "has a mount point inside it" "mcp: the one while it was mounted was refused"
        ok "mcp: and changed nothing" test ! -e "$WS/m2.txt"
        rm -f "$WS/m1.txt" "$WS/m3.txt"
else
        skip "a mount inside the workspace" "needs root to mount"
        skip "mcp: a mount between commands" "needs root to mount"
        skip "mcp: a mount between commands" "needs root to mount"
        skip "mcp: a mount between commands" "needs root to mount"
fi

is "$(tree_hash "$WS")" "$orig" "the workspace is as it started"
# A read-only workspace: refused before anything runs, not after the program worked (the
# overlay's root shows the upper layer's mode, so the program could write there).  As root
# every directory is writable; a read-only mount stops the state dir first.
if [ "$(id -u)" -ne 0 ]; then
        new_ws
        chmod a-w "$WS"
        orig=$(tree_hash "$WS")
        out=$(tx sh -c 'echo ran >ran.txt; echo ran' 2>&1)
        is "$?" 125 "a read-only workspace is refused: 125"
        like "$out" "^txbox: workspace '.*' is read-only \(no write permission\).*nothing ran" \
                "... saying it is read-only and that nothing ran"
        is "$(printf '%s' "$out" | grep -c '^ran$')" 0 "... and the program did not run"
        is "$(tree_hash "$WS")" "$orig" "... nothing changed"
        like "$(tx show "$(last_tx)")" "outcome +rolled_back" "... logged as rolled back"
        chmod u+w "$WS"
        is "$(tx sh -c 'echo ran >ran.txt; echo ran' 2>&1)" "ran" "once writable, the command runs"
else
        skip "read-only workspace" "root may write any directory"
fi

done_testing
