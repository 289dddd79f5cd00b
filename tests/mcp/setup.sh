#!/bin/sh
# tests/mcp/setup.sh DIR: install the official MCP TypeScript SDK (@modelcontextprotocol/sdk)
# into DIR/node_modules with npm, next to a copy of tests/mcp/client.mjs (ES modules resolve
# packages from the script's own directory).  Runs outside the test jail, which has no
# network.  Reuses an earlier install; prints why and exits 1 when npm or the registry is
# unavailable.  The version is pinned to a major so the test does not drift.
set -u
dir=$1
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
        echo "node/npm not installed (Debian: apt-get install nodejs npm)"
        exit 1
fi
if [ ! -f "$dir/node_modules/@modelcontextprotocol/sdk/package.json" ]; then
        tmp=$(mktemp -d "${dir%/}.tmp.XXXXXX") || exit 1
        if ! timeout 300 npm install --prefix "$tmp" --no-audit --no-fund --loglevel=error --fetch-retries=1 --fetch-timeout=30000 \
                '@modelcontextprotocol/sdk@^1' >"$tmp/npm.log" 2>&1; then
                echo "npm install @modelcontextprotocol/sdk failed (registry unreachable?): $(grep -m 2 . "$tmp/npm.log" | tr '\n' ' ')"
                rm -rf "$tmp"
                exit 1
        fi
        rm -rf "$dir" && mv "$tmp" "$dir" || { rm -rf "$tmp"; echo "cannot create $dir"; exit 1; }
fi
cp "$here/client.mjs" "$dir/client.mjs.new" && mv "$dir/client.mjs.new" "$dir/client.mjs"
chmod -R a+rX "$dir"
