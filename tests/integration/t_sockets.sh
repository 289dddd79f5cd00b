#!/bin/bash
# Unix sockets inside the sandbox: the program's own, in its /tmp and /dev/shm, work as they
# do outside (multiprocessing.Manager, servers and clients of every type, blocking connects
# that wait for a backlog); the host's stay out of reach, with a notice naming the socket
# (the attacks are in t_escape_kernel.sh).  And connect() of inet sockets still works.
. "$(dirname "$0")/lib.sh"

new_ws
out=$(tx run --timeout=30 -- python3 -c '
import multiprocessing as mp
if __name__ == "__main__":
    m = mp.Manager(); d = m.dict(); d["a"] = 1; q = m.Queue(); q.put("x")
    print("manager", d["a"], q.get()); m.shutdown()
' 2>&1); rc=$?
is "$rc" 0 "python3 multiprocessing.Manager(): exit 0 (was EPERM at bind)"
is "$out" "manager 1 x" "... its dict and queue work"

cat >"$T/own.py" <<'EOF'
import os, socket, sys, threading
kind = {"stream": socket.SOCK_STREAM, "seqpacket": socket.SOCK_SEQPACKET, "dgram": socket.SOCK_DGRAM}[sys.argv[1]]
path = "\0" + sys.argv[2][1:] if sys.argv[2][0] == "@" else sys.argv[2]  # @NAME: abstract
s = socket.socket(socket.AF_UNIX, kind); s.bind(path)
if kind == socket.SOCK_DGRAM:
    c = socket.socket(socket.AF_UNIX, kind); c.bind(path + ".c"); c.connect(path); c.send(b"ping")
    data, addr = s.recvfrom(10); s.sendto(data.upper(), addr); print(c.recv(10).decode())
else:
    s.listen(1)
    def serve():
        a, _ = s.accept(); a.send(a.recv(10).upper())
    t = threading.Thread(target=serve, daemon=True); t.start()
    c = socket.socket(socket.AF_UNIX, kind); c.connect(path); c.send(b"ping"); print(c.recv(10).decode()); t.join()
EOF
for kind in stream seqpacket dgram; do
        is "$(tx run --timeout=30 -- python3 "$T/own.py" $kind /tmp/own.sock 2>&1)" PING "a $kind socket in the sandbox's /tmp: server and client talk"
done
is "$(tx run --timeout=30 -- python3 "$T/own.py" stream /dev/shm/own.sock 2>&1)" PING "... in /dev/shm"
is "$(tx run --timeout=30 -- python3 "$T/own.py" stream @own 2>&1)" PING "... an abstract name (the sandbox's own network namespace)"
is "$(tx run --timeout=30 --net=loopback -- python3 "$T/own.py" stream @own 2>&1)" PING "... also with --net=loopback"
out=$(cd "$WS" && tx run --timeout=30 -- sh -c 'mkdir -p /tmp/d && cd /tmp/d && python3 '"$T/own.py"' stream rel.sock' 2>&1)
is "$out" PING "... a path relative to the cwd"
out=$(tx run --timeout=30 --net=host -- python3 "$T/own.py" stream @own 2>&1)
like "$out" "Permission denied" "with --net=host an abstract name is the host's: refused, also the sandbox's own"
is "$(tx run --timeout=30 --net=host -- python3 "$T/own.py" stream /tmp/own.sock 2>&1)" PING "with --net=host a socket in /tmp still works"
out=$(tx run --timeout=30 --commit=discard -- python3 "$T/own.py" stream "$WS/own.sock" 2>&1)
like "$out" "Permission denied" "a socket in the workspace is refused (its place is /tmp; one left there is never committed)"

# From a thread that is not the program's first (every Go program, Python's threads).
out=$(tx run --timeout=30 --net=loopback -- python3 -c '
import socket, threading
s = socket.socket(socket.AF_UNIX); s.bind("/tmp/t.sock"); s.listen(4)
t = socket.socket(); t.bind(("127.0.0.1", 0)); t.listen(4)
res = []
def client():
    c = socket.socket(socket.AF_UNIX); c.connect("/tmp/t.sock"); res.append("unix")
    d = socket.create_connection(t.getsockname()); res.append("tcp")
th = threading.Thread(target=client); th.start(); th.join(); print(" ".join(res))' 2>&1)
is "$out" "unix tcp" "connects from another thread of the program: unix and TCP"

# A blocking connect waits for room in a full backlog, as outside: the supervisor answers it
# once the listener accepted (it never waits itself).
out=$(tx run --timeout=30 -- python3 -c '
import socket, threading, time
s = socket.socket(socket.AF_UNIX); s.bind("/tmp/b.sock"); s.listen(0)
first = socket.socket(socket.AF_UNIX); first.connect("/tmp/b.sock")
def later():
    time.sleep(0.4); s.accept(); s.accept()
threading.Thread(target=later, daemon=True).start()
t0 = time.time(); c = socket.socket(socket.AF_UNIX); c.connect("/tmp/b.sock")
print("waited %.1f" % (time.time() - t0))' 2>&1)
like "$out" "^waited 0\.[3-9]|^waited [1-9]" "a blocking connect to a full backlog waits until the listener accepts ($out)"
out=$(tx run --timeout=30 -- python3 -c '
import socket
s = socket.socket(socket.AF_UNIX); s.bind("/tmp/n.sock"); s.listen(0)
a = socket.socket(socket.AF_UNIX); a.connect("/tmp/n.sock")
b = socket.socket(socket.AF_UNIX); b.setblocking(False)
try: b.connect("/tmp/n.sock"); print("connected")
except BlockingIOError: print("EAGAIN")' 2>&1)
is "$out" EAGAIN "a non-blocking one gets EAGAIN at once, as outside"

# inet: connect still works, blocking and not, through the supervisor.
out=$(tx run --timeout=30 --net=loopback -- python3 -c '
import asyncio, socket, threading
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(5); port = s.getsockname()[1]
def serve():
    for _ in range(2):
        a, _ = s.accept(); a.send(b"tcp")
threading.Thread(target=serve, daemon=True).start()
print(socket.create_connection(("127.0.0.1", port)).recv(3).decode())
async def main():
    r, w = await asyncio.open_connection("127.0.0.1", port); print((await r.read(3)).decode() + " async")
asyncio.run(main())
try: socket.create_connection(("127.0.0.1", 1))
except ConnectionRefusedError: print("refused")
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.connect(("127.0.0.1", 9)); print("udp", u.getpeername()[1])' 2>&1)
is "$out" "$(printf 'tcp\ntcp async\nrefused\nudp 9')" "--net=loopback: TCP blocking and asyncio, a refused port, UDP connect"
like "$(tx run --timeout=30 -- python3 -c '
import socket
try: socket.create_connection(("127.0.0.1", 80))
except OSError as e: print(e.errno)' 2>&1)" "^101$" "--net=none: connect fails as without txbox (ENETUNREACH)"

# A host socket: refused, and txbox says which.
python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(5); time.sleep(10)' "$T/host.sock" &
srv=$!
for _ in $(seq 50); do [ -S "$T/host.sock" ] && break; sleep 0.1; done
chmod 777 "$T/host.sock"
out=$(tx run --timeout=30 -- python3 -c '
import socket, sys
socket.socket(socket.AF_UNIX).connect(sys.argv[1])' "$T/host.sock" 2>&1); rc=$?
like "$out" "PermissionError" "a host socket: EACCES"
like "$out" "txbox: .*connection to the unix socket '$T/host.sock' outside the sandbox was refused" \
        "... and the txbox: line names the socket and why"
kill $srv 2>/dev/null
wait $srv 2>/dev/null

# 32-bit x86: the direct socket calls and socketcall(2) are checked the same way.
cat >"$T/c32.c" <<'EOF'
__asm__(".globl _start\n_start:\n xor %ebp,%ebp\n mov %esp,%eax\n push %eax\n call cmain\n");
static long sc(long nr, long a, long b, long c) {
    long r; __asm__ volatile("int $0x80" : "=a"(r) : "a"(nr), "b"(a), "c"(b), "d"(c) : "memory"); return r; }
struct sun { unsigned short fam; char path[108]; };
static int mk(struct sun *a, const char *p) { int i; a->fam = 1; for (i = 0; p[i] && i < 107; i++) a->path[i] = p[i]; a->path[i] = 0; return 3 + i; }
static long scall(int call, long a0, long a1, long a2) { long args[3] = {a0, a1, a2}; return sc(102, call, (long)args, 0); }
void cmain(long *sp) {
    struct sun mine, host; int ml = mk(&mine, "/tmp/x32.sock"), hl = mk(&host, ((char **)(sp + 1))[1]);
    long s = sc(359, 1, 1, 0); sc(361, s, (long)&mine, ml); sc(363, s, 5, 0);  /* socket, bind, listen */
    long r1 = sc(362, sc(359, 1, 1, 0), (long)&mine, ml);                    /* connect: its own */
    long r2 = sc(362, sc(359, 1, 1, 0), (long)&host, hl);                    /* the host's */
    long r3 = scall(3, sc(359, 1, 1, 0), (long)&host, hl);                   /* socketcall's connect */
    long r4 = scall(1, 1, 1, 0);                                             /* socketcall's socket */
    sc(1, 100 + (r1 == 0) + 2 * (r2 == -13) + 4 * (r3 == -13) + 8 * (r4 < 0), 0, 0);
}
EOF
if gcc -m32 -O1 -fno-pic -fno-stack-protector -nostdlib -static -o "$T/c32" "$T/c32.c" 2>/dev/null; then
        python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(5); time.sleep(10)' "$T/host32.sock" &
        srv=$!
        for _ in $(seq 50); do [ -S "$T/host32.sock" ] && break; sleep 0.1; done
        cp "$T/c32" "$WS/c32"
        tx run --timeout=30 --commit=discard -- ./c32 "$T/host32.sock" >/dev/null 2>&1
        is "$?" 115 "32-bit x86: its own socket reachable, the host's refused, socketcall's connect and socket too"
        kill $srv 2>/dev/null
        wait $srv 2>/dev/null
else
        skip "32-bit x86 unix sockets" "no gcc -m32"
fi
like "$(tx doctor 2>&1)" "ok +unix sockets +connect\(\) made by the supervisor" "doctor says how unix sockets are confined"

done_testing
