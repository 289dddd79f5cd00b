#!/bin/bash
# scripts/policy-table.sh [--check]: docs/POLICY.md's table of the built-in rules, generated
# from src/lib/policy/default.yml (by $BUILD/tests/test_policy_rules --table, which reads the
# compiled rules: run make first) and written between its markers.  --check: exit 1 when
# the table in the file differs, writing nothing (tests/unit/test_policy_rules.c checks the
# same in make check).
set -eu
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
doc=docs/POLICY.md
begin='<!-- rules: generated from src/lib/policy/default.yml by scripts/policy-table.sh -->'
end='<!-- end of the generated rules -->'
gen=$BUILD/tests/test_policy_rules
[ -x "$gen" ] || { echo "policy-table: $gen missing; run make first" >&2; exit 2; }
grep -qxF "$begin" "$doc" && grep -qxF "$end" "$doc" || { echo "policy-table: $doc lacks the markers" >&2; exit 2; }
tmp=$(mktemp "${TMPDIR:-/tmp}/policy-table.XXXXXX")
trap 'rm -f "$tmp" "$tmp.table"' EXIT
"$gen" --table >"$tmp.table"
awk -v b="$begin" -v e="$end" -v t="$tmp.table" '
        $0 == b { print; while ((getline l < t) > 0) print l; skip = 1; next }
        $0 == e { skip = 0 }
        !skip' "$doc" >"$tmp"
if [ "${1:-}" = --check ]; then
        cmp -s "$tmp" "$doc" || { echo "policy-table: $doc's rule table is not the generated one" >&2; exit 1; }
        exit 0
fi
cmp -s "$tmp" "$doc" || cat "$tmp" >"$doc"
