#!/bin/bash
# --net=allow:HOST,...: only the listed hosts, through the supervisor's proxy; every attempt
# logged.  The "internet" here is an HTTP server on the jail's own loopback.
. "$(dirname "$0")/lib.sh"

new_ws
printf 'version: 1\ndefaults: false\nrules: []\n' >"$T/allow-all.yml"
txa() { "$TXBOX" -C "$WS" --policy "$T/allow-all.yml" "$@"; }
mkdir -p "$T/www" && echo hello-from-server >"$T/www/hello.txt"
port=$((20000 + RANDOM % 20000))
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$T/www" >/dev/null 2>&1 &
server=$!
for _ in $(seq 1 50); do python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 1)" 2>/dev/null && break; sleep 0.1; done

GET="import os, sys, urllib.request
try:
    print(urllib.request.urlopen('http://localhost:$port/hello.txt', timeout=10).read().decode().strip())
except Exception as e:
    print('error:', e); sys.exit(3)"
CONNECT="import socket, sys
s = socket.create_connection(('127.0.0.1', 3128), 10)
s.sendall(b'CONNECT localhost:$port HTTP/1.1\r\nHost: localhost:$port\r\n\r\n')
head = s.recv(4096)
if b' 200 ' not in head.split(b'\r\n')[0]: print('refused:', head.split(b'\r\n')[0].decode()); sys.exit(4)
s.sendall(b'GET /hello.txt HTTP/1.0\r\nHost: localhost\r\n\r\n')
data = b''
while True:
    b = s.recv(4096)
    if not b: break
    data += b
print(data.split(b'\r\n\r\n', 1)[1].decode().strip())"

is "$(txa run --net=allow:localhost --report="$T/a.json" -- python3 -c "$GET")" "hello-from-server" "an allowed host is reached through the proxy (plain HTTP)"
like "$(cat "$T/a.json")" "\"net\": \"allowed GET localhost:$port\"" "the report logs the allowed attempt"
is "$(txa run --net=allow:localhost -- python3 -c "$CONNECT")" "hello-from-server" "CONNECT tunnels to an allowed host"
out=$(txa run --net=allow:example.org --report="$T/d.json" -- python3 -c "$GET" 2>&1)
is "$?" 3 "a host not in the list is refused"
like "$out" "403" "with 403 from the proxy"
like "$(cat "$T/d.json")" "refused GET localhost:$port \(not in the allow list\)" "the report logs the refusal"
out=$(txa run --net=allow:example.org -- python3 -c "$CONNECT" 2>&1)
is "$?" 4 "CONNECT to a host not in the list is refused"
out=$(txa run --net=allow:sub.localhost -- python3 -c "$GET" 2>&1)
is "$?" 3 "a parent domain of a listed host is not allowed"
out=$(txa run -- python3 -c "$GET" 2>&1)
is "$?" 3 "--net=none: no way out at all"
out=$(txa run --net=allow: -- true 2>&1)
is "$?" 125 "--net=allow: with no host is bad usage"
out=$(txa run --net=allow:'a b' -- true 2>&1)
is "$?" 125 "--net=allow: with a bad host name is bad usage"

kill "$server" 2>/dev/null
wait "$server" 2>/dev/null
done_testing
