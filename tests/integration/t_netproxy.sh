#!/bin/bash
# --net=allow:ENTRY,...: only the listed hosts and ports, through a proxy process outside the
# sandbox that resolves each name once, refuses loopback, private, link-local (cloud
# metadata), multicast and unspecified addresses in every spelling unless the user listed
# the address or wrote private:NAME, connects to exactly the address it checked, and logs it.
# The "internet" here is an HTTP server on the jail's own loopback: reaching it needs the
# explicit opt-in, which is what most of these tests are about.
. "$(dirname "$0")/lib.sh"

new_ws
printf 'version: 1\ndefaults: false\nrules: []\n' >"$T/allow-all.yml"
txa() { "$TXBOX" -C "$WS" --policy "$T/allow-all.yml" "$@"; }
mkdir -p "$T/www" && echo hello-from-server >"$T/www/hello.txt"
port=$((20000 + RANDOM % 20000))
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$T/www" >/dev/null 2>&1 &
server=$!
for _ in $(seq 1 50); do python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 1)" 2>/dev/null && break; sleep 0.1; done

# get URL: plain HTTP through the proxy (HTTP_PROXY is set for the program); prints the body,
# or "error: ..." and exits 3.
get() {
        printf 'import sys, urllib.request\ntry:\n    print(urllib.request.urlopen("%s", timeout=20).read().decode().strip())\nexcept Exception as e:\n    print("error:", e); sys.exit(3)\n' "$1"
}
# tunnel HOST:PORT: CONNECT through the proxy, then a GET inside the tunnel; exits 4 when the
# proxy refuses.
tunnel() {
        cat <<EOF
import socket, sys
s = socket.create_connection(('127.0.0.1', 3128), 20)
s.sendall(b'CONNECT $1 HTTP/1.1\r\nHost: $1\r\n\r\n')
head = s.recv(4096)
if b' 200 ' not in head.split(b'\r\n')[0]: print('refused:', head.split(b'\r\n')[0].decode()); sys.exit(4)
s.sendall(b'GET /hello.txt HTTP/1.0\r\nHost: x\r\n\r\n')
data = b''
while True:
    b = s.recv(4096)
    if not b: break
    data += b
print(data.split(b'\r\n\r\n', 1)[1].decode().strip())
EOF
}
netlog() { sed -n 's/.*"net": "\([^"]*\)".*/\1/p' "$1"; }

# What the user listed explicitly is reached, and the log names the address used.
is "$(txa run --net=allow:127.0.0.1:$port --report="$T/a.json" -- python3 -c "$(get http://127.0.0.1:$port/hello.txt)")" \
        hello-from-server "a listed address and port are reached through the proxy (plain HTTP)"
like "$(netlog "$T/a.json")" "^allowed GET 127.0.0.1:$port via 127.0.0.1$" "the report logs the attempt with its address"
is "$(txa run --net=allow:127.0.0.1:$port -- python3 -c "$(tunnel 127.0.0.1:$port)")" hello-from-server \
        "CONNECT tunnels to a listed address"
is "$(txa run --net=allow:private:localhost:$port --report="$T/p.json" -- python3 -c "$(get http://localhost:$port/hello.txt)")" \
        hello-from-server "private:NAME:PORT lets a name reach a loopback address (the user asked)"
like "$(netlog "$T/p.json")" "^allowed GET localhost:$port via 127\.0\.0\.1$" "... connecting to the address checked"

# A listed name that resolves to loopback is refused: the name alone never implies it.
out=$(txa run --net=allow:localhost:$port --report="$T/l.json" -- python3 -c "$(get http://localhost:$port/hello.txt)" 2>&1)
is "$?" 3 "a listed name that resolves to loopback is refused"
like "$out" "403" "... with 403 from the proxy"
like "$(netlog "$T/l.json")" "refused GET localhost:$port \(resolves to loopback address (127\.0\.0\.1|::1)" \
        "... and the report says which address it resolved to"
out=$(txa run --net=allow:localhost:$port -- python3 -c "$(tunnel localhost:$port)" 2>&1)
is "$?" 4 "CONNECT to a listed name that resolves to loopback is refused"

# A listed name that resolves to a private, link-local or ULA address (an internal name, a
# wildcard DNS service, a rebinding answer) is refused the same way, and so is a name with
# one such address among public ones.  The names come from an /etc/hosts of the test's own,
# bind-mounted in a mount namespace that only txbox and its proxy see (as a user: in a user
# namespace of its own, mapped back to the user's uid before txbox runs).
cat >"$T/hosts" <<'EOF'
127.0.0.1 web.test
10.11.12.13 intranet.test
169.254.169.254 metadata.test
fd00::1 ula.test
93.184.216.34 mixed.test
192.168.1.1 mixed.test
EOF
chmod 644 "$T/hosts"
with_hosts() {
        if [ "$(id -u)" -eq 0 ]; then
                unshare -m sh -c 'mount --bind "$0" /etc/hosts && exec "$@"' "$T/hosts" "$@"
        else
                U=$(id -u) G=$(id -g) unshare -rm sh -c 'mount --bind "$0" /etc/hosts &&
                        exec unshare --user --map-user="$U" --map-group="$G" "$@"' "$T/hosts" "$@"
        fi
}
is "$(with_hosts "$TXBOX" -C "$WS" --policy "$T/allow-all.yml" run --net=allow:private:web.test:$port -- \
        python3 -c "$(get http://web.test:$port/hello.txt)")" hello-from-server \
        "the test's host names resolve for the proxy (private:web.test reaches it)"
for case in 'intranet|private address 10\.11\.12\.13' 'metadata|link-local address 169\.254\.169\.254' \
        'ula|unique local \(private\) address fd00::1' 'mixed|private address 192\.168\.1\.1'; do
        name=${case%%|*} want=${case#*|}
        out=$(with_hosts "$TXBOX" -C "$WS" --policy "$T/allow-all.yml" run --net=allow:$name.test \
                --report="$T/h.json" -- python3 -c "$(tunnel $name.test:443)" 2>&1)
        is "$?" 4 "a listed name that resolves to a denied address ($name.test) is refused"
        like "$(netlog "$T/h.json")" "^refused CONNECT $name\.test:443 \(resolves to $want;" \
                "... and the log says which address it resolved to"
done

# Addresses match only addresses the user listed, in any spelling.
out=$(txa run --net=allow:private:localhost:$port --report="$T/r.json" -- python3 -c "$(get http://10.11.12.13:$port/)" 2>&1)
is "$?" 3 "a private address that is not listed is refused"
like "$(netlog "$T/r.json")" "refused GET 10.11.12.13:$port \(address not in the allow list\)" "... and logged"
for h in 127.1 2130706433 0x7f000001 '[::ffff:127.0.0.1]' '[::1]'; do
        out=$(txa run --net=allow:localhost,example.org -- python3 -c "$(tunnel "$h:443")" 2>&1)
        is "$?" 4 "CONNECT to loopback spelt $h is refused"
done
is "$(txa run --net=allow:127.0.0.1:$port -- python3 -c "$(tunnel "[::ffff:127.0.0.1]:$port")")" hello-from-server \
        "the listed address spelt IPv4-mapped is the same address"
out=$(txa run --net=allow:127.0.0.1:$port -- python3 -c "$(tunnel 169.254.169.254:80)" 2>&1)
is "$?" 4 "the cloud metadata address is refused"

# Ports: 80 and 443 unless the entry names one.
out=$(txa run --net=allow:127.0.0.1 --report="$T/o.json" -- python3 -c "$(get http://127.0.0.1:$port/hello.txt)" 2>&1)
is "$?" 3 "an unlisted port of a listed address is refused"
like "$(netlog "$T/o.json")" "port not allowed" "... and the report says so"
out=$(txa run --net=allow:127.0.0.1:$((port + 1)) -- python3 -c "$(tunnel 127.0.0.1:$port)" 2>&1)
is "$?" 4 "another port than the listed one is refused"

# Names not in the list, and the old cases.
out=$(txa run --net=allow:example.org --report="$T/d.json" -- python3 -c "$(get http://localhost:$port/hello.txt)" 2>&1)
is "$?" 3 "a host not in the list is refused"
like "$(netlog "$T/d.json")" "refused GET localhost:$port \(not in the allow list\)" "the report logs the refusal"
out=$(txa run --net=allow:example.org -- python3 -c "$(tunnel localhost:$port)" 2>&1)
is "$?" 4 "CONNECT to a host not in the list is refused"
out=$(txa run --net=allow:private:sub.localhost:$port -- python3 -c "$(get http://localhost:$port/hello.txt)" 2>&1)
is "$?" 3 "a parent domain of a listed host is not allowed"
out=$(txa run -- python3 -c "$(get http://127.0.0.1:$port/hello.txt)" 2>&1)
is "$?" 3 "--net=none: no way out at all"
for bad in '' 'a b' '127.1' '::1' 'host:99999' 'private:'; do
        out=$(txa run "--net=allow:$bad" -- true 2>&1)
        is "$?" 125 "--net=allow:'$bad' is bad usage"
done
like "$(txa run --net=allow:::1 -- true 2>&1)" "brackets" "... and the error says how to write an IPv6 address"

# A stalled resolver holds up its own connection only: exec checks, the timeout and the
# program's end go on.  TXBOX_TEST_RESOLVE_STALL_MS delays names under .invalid only (a
# top-level domain that never resolves).
stall() { TXBOX=$TXBOX_HOOKS TXBOX_TEST_RESOLVE_STALL_MS=15000 txa run --net=allow:stall.invalid "$@"; }
get http://stall.invalid/x >"$T/stalled.py"
start=$(date +%s%N)
out=$(stall -- sh -c "python3 $T/stalled.py >/dev/null 2>&1 &
        sleep 0.5; s=\$(date +%s%N); for i in 1 2 3 4 5 6 7 8 9 10; do /bin/true; done; echo \$(( (\$(date +%s%N) - s) / 1000000 ))")
rc=$?
elapsed=$((($(date +%s%N) - start) / 1000000))
is "$rc" 0 "a command runs while another connection's resolution is stalled"
ok "ten checked execs took ${out:-?} ms during a 15 s stall" test "${out:-99999}" -lt 5000
ok "... and the transaction ended without waiting for the resolver (${elapsed} ms)" test "$elapsed" -lt 10000
start=$(date +%s%N)
stall --timeout=2 -- python3 "$T/stalled.py" >/dev/null 2>&1
rc=$?
elapsed=$((($(date +%s%N) - start) / 1000000))
is "$rc" 124 "the timeout ends a program waiting on a stalled resolution"
ok "... at the timeout, not the stall's end (${elapsed} ms)" test "$elapsed" -lt 10000

kill "$server" 2>/dev/null
wait "$server" 2>/dev/null
done_testing
