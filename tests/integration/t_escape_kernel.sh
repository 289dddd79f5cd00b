#!/bin/bash
# Escape suite, kernel interfaces: the seccomp deny-list, unix sockets served outside, other
# processes, the keyring, secret environment variables, terminal injection, the network.
# Every attempt runs through txbox and must fail without changing anything outside.
. "$(dirname "$0")/lib.sh"

new_ws
is "$(tx run -- echo alive 2>&1)" alive "txbox runs here (the attempts below are meaningful)"
# probe.py NAME: tries one forbidden operation; prints "blocked ERRNO" or "ALLOWED".
cat >"$T/probe.py" <<'EOF'
import ctypes, errno, os, socket, sys
libc = ctypes.CDLL(None, use_errno=True)
def sc(nr, *a):
    r = libc.syscall(nr, *[ctypes.c_long(x) for x in a])
    return r, ctypes.get_errno()
def report(r, e):
    print("ALLOWED" if r >= 0 else "blocked %s" % errno.errorcode.get(e, e))
what = sys.argv[1]
if what == "keyctl":        # KEYCTL_GET_KEYRING_ID of the user keyring
    report(*sc(250, 0, -4 & 0xffffffffffffffff, 0))
elif what == "add_key":
    report(*sc(248, ctypes.addressof(ctypes.create_string_buffer(b"user")), ctypes.addressof(ctypes.create_string_buffer(b"x")), 0, 0, -4 & 0xffffffffffffffff))
elif what == "bpf":
    report(*sc(321, 0, 0, 0))
elif what == "perf_event_open":
    report(*sc(298, 0, 0, -1 & 0xffffffffffffffff, -1 & 0xffffffffffffffff, 0))
elif what == "userfaultfd":
    report(*sc(323, 0))
elif what == "io_uring_setup":
    report(*sc(425, 1, ctypes.addressof(ctypes.create_string_buffer(120))))
elif what == "open_by_handle_at":
    report(*sc(304, -100 & 0xffffffffffffffff, ctypes.addressof(ctypes.create_string_buffer(64)), 0))
elif what == "mount":
    report(*sc(165, 0, ctypes.addressof(ctypes.create_string_buffer(b"/tmp")), ctypes.addressof(ctypes.create_string_buffer(b"tmpfs")), 0, 0))
elif what == "unshare_user":
    report(*sc(272, 0x10000000))
elif what == "tiocsti":
    fd = os.open("/dev/tty", os.O_RDWR) if os.path.exists("/dev/tty") and sys.stdin is None else 0
    b = ctypes.create_string_buffer(b"x")
    report(libc.ioctl(fd, 0x5412, b), ctypes.get_errno())
elif what == "vsock":
    try: socket.socket(40, socket.SOCK_STREAM); print("ALLOWED")
    except OSError as e: print("blocked", errno.errorcode[e.errno])
elif what == "packet":
    try: socket.socket(17, socket.SOCK_RAW); print("ALLOWED")
    except OSError as e: print("blocked", errno.errorcode[e.errno])
elif what == "unix":        # connect to a unix socket served outside
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.connect(sys.argv[2]); s.sendall(b"PWNED\n"); print("ALLOWED")
    except OSError as e: print("blocked", errno.errorcode[e.errno])
elif what == "unix_link":   # ... through a link in the sandbox's own /tmp
    try:
        os.symlink(sys.argv[2], "/tmp/l.sock")
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.connect("/tmp/l.sock"); s.sendall(b"PWNED\n"); print("ALLOWED")
    except OSError as e: print("blocked", errno.errorcode[e.errno])
elif what == "unix_rel":    # ... by a path relative to the cwd
    try:
        os.chdir(os.path.dirname(sys.argv[2]))
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.connect(os.path.basename(sys.argv[2])); s.sendall(b"PWNED\n"); print("ALLOWED")
    except OSError as e: print("blocked", errno.errorcode[e.errno])
elif what == "unix_proc":   # ... through /proc/self/root and /proc/1/root
    r = []
    for p in ["/proc/self/root" + sys.argv[2], "/proc/1/root" + sys.argv[2], "/proc/self/cwd/../../.." + sys.argv[2]]:
        try:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.connect(p); s.sendall(b"PWNED\n"); r.append("ALLOWED")
        except OSError as e: r.append(errno.errorcode[e.errno])
    print("ALLOWED" if "ALLOWED" in r else "blocked " + ",".join(r))
elif what == "unix_race":   # other threads swap the descriptor and the address under connect()
    import threading, time
    path = sys.argv[2].encode()
    unix_addr = (ctypes.c_char * 110)(*(b"\x01\x00" + path + b"\0" * (108 - len(path))))
    inet_addr = (ctypes.c_char * 110)(*(b"\x02\x00\x00\x50\x7f\x00\x00\x01" + b"\0" * 102))
    buf = (ctypes.c_char * 110)()
    ctypes.memmove(buf, inet_addr, 110)
    tcp = socket.socket(); fd = tcp.fileno()
    unix = [socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) for _ in range(64)]
    stop = time.time() + 1.5
    def swap():
        i = 0
        while time.time() < stop:
            libc.dup2(unix[i % 64].fileno(), fd); ctypes.memmove(buf, unix_addr, 110)
            libc.dup2(socket.socket().detach() if i % 97 == 0 else tcp.fileno(), fd); ctypes.memmove(buf, inet_addr, 110)
            i += 1
    ts = [threading.Thread(target=swap) for _ in range(2)]
    for t in ts: t.start()
    won = 0
    while time.time() < stop:
        if libc.connect(fd, buf, 110) == 0: won += 1
    for t in ts: t.join()
    for u in unix:
        try:
            u.send(b"PWNED\n"); won += 1
        except OSError: pass
    print("ALLOWED %d" % won if won else "blocked")
elif what == "abstract":    # connect to an abstract unix socket served outside
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.connect("\0" + sys.argv[2]); s.sendall(b"PWNED\n"); print("ALLOWED")
    except OSError as e: print("blocked", errno.errorcode[e.errno])
elif what == "tcp":
    try:
        s = socket.create_connection(("127.0.0.1", int(sys.argv[2])), timeout=2); s.sendall(b"PWNED\n"); print("ALLOWED")
    except OSError as e: print("blocked", errno.errorcode.get(e.errno, e.errno))
elif what == "ptrace_inside":   # gdb-style tracing of the program's own child works
    pid = os.fork()
    if pid == 0:
        libc.ptrace(0, 0, 0, 0); os.kill(os.getpid(), 19); os._exit(0)
    _, st = os.waitpid(pid, os.WUNTRACED)
    print("traced" if os.WIFSTOPPED(st) else "not traced"); os.kill(pid, 9)
elif what == "socketpair":
    a, b = socket.socketpair(); a.send(b"ok"); print(b.recv(2).decode())
EOF
chmod 644 "$T/probe.py"
probe() { # probe NAME [ARG [TX-RUN-OPTION...]]
        local n=$1 a=${2:-}
        shift; [ $# -gt 0 ] && shift
        tx run "$@" -- python3 "$T/probe.py" "$n" $a 2>&1 | tail -1
}

# ---- seccomp deny-list ----
for s in keyctl add_key bpf perf_event_open userfaultfd io_uring_setup open_by_handle_at mount unshare_user vsock packet; do
        like "$(probe $s)" "^blocked EPERM" "seccomp: $s is denied"
done
like "$(probe tiocsti </dev/null)" "^blocked EPERM" "seccomp: TIOCSTI terminal injection is denied"
is "$(probe ptrace_inside)" "traced" "ptrace inside the sandbox still works (debuggers)"
is "$(probe socketpair)" "ok" "socketpair still works"

# ---- host-wide kernel knobs (checked against the uid, not capabilities) ----
# Writes the current value back: harmless even if the protection were missing.
for k in kernel/core_pattern vm/overcommit_ratio kernel/pid_max; do
        out=$(tx run -- sh -c "v=\$(cat /proc/sys/$k) && printf '%s\n' \"\$v\" >/proc/sys/$k && echo WROTE" 2>&1)
        ok "/proc/sys/$k is read-only" test -z "$(printf '%s' "$out" | grep WROTE)"
done

# ---- a unix socket served outside ----
rm -f "$T/outside.sock" "$T/sock.log"
python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(5)
a = socket.socket(socket.AF_UNIX); a.bind("\0txbox-escape-abstract"); a.listen(5)
import select
while True:
    r, _, _ = select.select([s, a], [], [], 30)
    if not r: break
    for l in r:
        c, _ = l.accept(); open(sys.argv[2], "ab").write(c.recv(100)); c.close()
' "$T/outside.sock" "$T/sock.log" &
srv=$!
for _ in $(seq 50); do [ -S "$T/outside.sock" ] && break; sleep 0.1; done
chmod 777 "$T/outside.sock"
like "$(probe unix "$T/outside.sock")" "^blocked" "a unix socket served outside is unreachable"
like "$(probe unix "$T/outside.sock" --net=host)" "^blocked" "... also with --net=host"
like "$(probe unix_link "$T/outside.sock")" "^blocked" "... through a link in the sandbox's /tmp"
like "$(probe unix_rel "$T/outside.sock")" "^blocked" "... by a path relative to the cwd"
like "$(probe unix_proc "$T/outside.sock")" "^blocked" "... through /proc/self/root, /proc/1/root, /proc/self/cwd"
ln "$T/outside.sock" "$WS/hard.sock" 2>/dev/null && ln -s "$T/outside.sock" "$WS/soft.sock"
like "$(probe unix "$WS/hard.sock")" "^blocked" "... through a hard link in the workspace"
like "$(probe unix "$WS/soft.sock")" "^blocked" "... through a symlink in the workspace"
rm -f "$WS/hard.sock" "$WS/soft.sock"
like "$(probe unix_race "$T/outside.sock")" "^blocked" "... with threads swapping the descriptor and the address under connect()"
like "$(probe abstract txbox-escape-abstract)" "^blocked" "an abstract unix socket outside is unreachable"
like "$(probe abstract txbox-escape-abstract --net=host)" "^blocked" "... also with --net=host (Landlock scope)"
kill $srv 2>/dev/null
wait $srv 2>/dev/null
ok "nothing reached the outside servers" test ! -s "$T/sock.log"
# The probes can fail: with the user's opt-in the same attempts reach the host's socket.
rm -f "$T/outside.sock"
python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(128); time.sleep(15)' "$T/outside.sock" &
srv=$!
for _ in $(seq 50); do [ -S "$T/outside.sock" ] && break; sleep 0.1; done
chmod 777 "$T/outside.sock"
like "$(probe unix_rel "$T/outside.sock" --allow-unix-sockets)" "^ALLOWED" \
        "(with --allow-unix-sockets the relative-path probe reaches it: the probes can fail)"
like "$(probe unix_race "$T/outside.sock" --allow-unix-sockets)" "^ALLOWED" \
        "(... and so does the race: the test would see one won)"
kill $srv 2>/dev/null
wait $srv 2>/dev/null

# ---- a loopback service with the network off ----
python3 -c '
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(("127.0.0.1", 0)); s.listen(5)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
s.settimeout(20)
try:
    c, _ = s.accept(); open(sys.argv[2], "ab").write(c.recv(100))
except OSError: pass
' "$T/port" "$T/tcp.log" &
srv=$!
for _ in $(seq 50); do [ -s "$T/port" ] && break; sleep 0.1; done
port=$(cat "$T/port")
like "$(probe tcp "$port")" "^blocked" "--net=none: a loopback service outside is unreachable"
like "$(probe tcp "$port" --net=loopback)" "^blocked" "--net=loopback: the sandbox's loopback is its own"
kill $srv 2>/dev/null
wait $srv 2>/dev/null
ok "nothing reached the loopback service" test ! -s "$T/tcp.log"

# ---- other processes: signals, ptrace, environment ----
SECRET_CANARY=PLANTED-ENV-OUTSIDE sleep 300 &
victim=$!
out=$(tx run -- sh -c "kill -9 $victim; kill -0 $victim && echo visible; cat /proc/$victim/environ" 2>&1)
ok "a process outside is neither visible nor killable" kill -0 $victim
ok "its environment is unreadable" test -z "$(printf '%s' "$out" | grep -a PLANTED)"
out=$(tx run -- python3 -c "
import ctypes; libc = ctypes.CDLL(None, use_errno=True)
print('attach', libc.ptrace(16, $victim, 0, 0), ctypes.get_errno())" 2>&1)
like "$out" "attach -1" "ptrace of a process outside fails"
kill $victim
wait $victim 2>/dev/null

# ---- secret environment variables ----
out=$(GITHUB_TOKEN=PLANTED-1 AWS_SECRET_ACCESS_KEY=PLANTED-2 MY_PASSWORD=PLANTED-3 OPENAI_API_KEY=PLANTED-4 \
        SSH_AUTH_SOCK=/PLANTED-5 HARMLESS=visible tx run -- env 2>&1)
ok "secret-looking variables are withheld" test -z "$(printf '%s' "$out" | grep PLANTED)"
like "$out" "HARMLESS=visible" "ordinary variables pass"
like "$out" "PATH=" "PATH passes"

# ---- stdio stays writable under Landlock, but opens no door ----
is "$(tx run -- sh -c 'echo to-stderr >/dev/stderr' 2>&1)" "to-stderr" "writing /dev/stderr (a pipe) works"
tx run -- sh -c 'echo to-file' >"$T/stdout.txt"
is "$(cat "$T/stdout.txt")" "to-file" "writing a redirected stdout works"
# The caller's files behind the streams are not the program's to reopen: Landlock checks
# opens, and the streams need none.  (No policy in the way: the sandbox itself must hold.)
printf 'version: 1\ndefaults: false\nrules: []\n' >"$T/allow-all.yml"
txa() { "$TXBOX" -C "$WS" --policy "$T/allow-all.yml" "$@"; }
echo keep >"$T/stdin.txt"
txa run -- sh -c 'echo pwn >/proc/self/fd/0; echo pwn >/dev/stdin; printf pwn >>/dev/fd/0' <"$T/stdin.txt" >/dev/null 2>&1
is "$(cat "$T/stdin.txt")" "keep" "a file passed as stdin cannot be reopened for writing"
mkdir -p "$T/stdin.d"
txa run -- sh -c 'echo pwn >/proc/self/fd/0/new; mkdir /dev/stdin/sub; ln -s x /dev/fd/0/l' <"$T/stdin.d" >/dev/null 2>&1
is "$(ls -A "$T/stdin.d")" "" "nothing can be created in a directory passed as stdin"
echo keep >"$T/stdout.keep"
txa run -- sh -c 'echo pwn >/proc/self/fd/1' >>"$T/stdout.keep" 2>/dev/null
is "$(cat "$T/stdout.keep")" "keep" "a file appended to on stdout cannot be reopened (and truncated)"
python3 - "$TXBOX" "$WS" "$T/stdin.txt" "$T/allow-all.yml" <<'PY' >"$T/fd9.out" 2>&1
import os, subprocess, sys
fd = os.open(sys.argv[3], os.O_RDONLY)
subprocess.run([sys.argv[1], "-C", sys.argv[2], "--policy", sys.argv[4], "run", "--", "python3", "-c",
                "open('/proc/self/fd/0', 'w').write('pwn')"], stdin=fd)
PY
is "$(cat "$T/stdin.txt")" "keep" "... nor through a descriptor a parent process passed"

done_testing
