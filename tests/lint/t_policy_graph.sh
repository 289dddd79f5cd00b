#!/bin/bash
# scripts/policy_graph.sh: the policy engine's files call one another in no circle outside
# the shell parser's own, and a circle planted in a copy is refused, naming its files.
# Reads objects only; writes nothing outside its temp dir.  TAP.
set -u
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
n=0 failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
nok() { n=$((n + 1)); failed=1; echo "not ok $n - $1"; }
T=$(mktemp -d "${TMPDIR:-/var/tmp}/txbox-pgraph.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT

if [ ! -d "$BUILD/src/lib/policy" ]; then
        echo "1..0 # SKIP no $BUILD/src/lib/policy (make all first)"
        exit 0
fi
out=$(scripts/policy_graph.sh --objects "$BUILD" 2>&1) && ok "no circle outside the parser's" ||
        nok "the tree's objects: $out"
scripts/policy_graph.sh --objects "$BUILD" -v >"$T/v" 2>&1
edges=$(grep -c -- ' -> ' "$T/v")
[ "$edges" -gt 50 ] && ok "the edges are read ($edges)" || nok "only $edges edges read"
grep -qx 'parse_emit -> scan' "$T/v" && ok "an edge it must see: parse_emit -> scan" ||
        nok "parse_emit -> scan not seen"
for e in 'unwrap -> parse' 'scan -> parse' 'scan -> unwrap' 'parse_emit -> unwrap' 'listing -> unwrap'; do
        grep -qx -- "$e" "$T/v" && nok "edge back: $e" || ok "no edge $e"
done
grep -q "the parser's own circle: parse parse_emit parse_expand parse_simple parse_word" "$T/v" &&
        ok "the parser's circle is seen and allowed" || nok "the parser's circle: $(grep circle "$T/v")"

# Planted edges, on the tree's own edge list.
sed -n 's/ -> / /p' "$T/v" >"$T/edges"
# The expected text: each of its |-separated parts must be in the message (a circle
# through many files is named by the files that make it one, not by the whole list, which
# grows with every new tool model).
has_all() {
        local IFS='|' part
        for part in $1; do
                grep -qF -- "$part" <<<"$2" || return 1
        done
}
planted() { # description, expected text, then edges "FROM TO" added
        local what=$1 want=$2
        shift 2
        cp "$T/edges" "$T/e2" && printf '%s\n' "$@" >>"$T/e2"
        out=$(scripts/policy_graph.sh --edges "$T/e2" 2>&1)
        if [ $? -eq 1 ] && has_all "$want" "$out"; then ok "refused: $what"; else nok "not refused: $what (got: $out)"; fi
}
planted "scan.c calling the parser again" \
        "in a circle: code feeds listing parse parse_emit parse_expand parse_simple parse_word scan" "scan parse"
planted "the old circle: the parser calling the unwrapper, which calls the parser" \
        "in a circle: | parse | parse_emit | scan | unwrap" \
        "parse_emit unwrap" "scan parse"
planted "listing.c calling the unwrapper back" "in a circle: listing unwrap" "listing unwrap"
planted "load.c and match.c calling each other" "in a circle: load match" "load match"
planted "a tool model calling back into the look-up" "in a circle: toolgit tools" "toolgit tools"
cp "$T/edges" "$T/e2" && echo "parse_word parse_simple" >>"$T/e2"
out=$(scripts/policy_graph.sh --edges "$T/e2" 2>&1) && ok "an edge inside the parser passes" ||
        nok "an edge inside the parser: $out"

# A planted call in a real object: scan.c calling the parser, compiled into a copy.
if command -v "${CC:-cc}" >/dev/null; then
        mkdir -p "$T/obj/src/lib/policy" && cp "$BUILD"/src/lib/policy/*.o "$T/obj/src/lib/policy/"
        { cat src/lib/policy/scan.c
          printf 'void planted(struct scan *sc);\nvoid planted(struct scan *sc) { parse_script(sc, "", 0, (struct srcpos){0}, 0); }\n'
        } >"$T/scan.c"
        "${CC:-cc}" -std=gnu11 -Iinclude -Isrc/lib -Isrc/lib/policy -c -o "$T/obj/src/lib/policy/scan.o" "$T/scan.c" &&
                out=$(scripts/policy_graph.sh --objects "$T/obj" 2>&1)
        if [ $? -eq 1 ] && grep -qF "in a circle: code feeds listing parse parse_emit parse_expand parse_simple parse_word scan" <<<"$out"; then
                ok "refused: an object of scan.c calling parse_script"
        else
                nok "not refused: an object of scan.c calling parse_script (got: $out)"
        fi
else
        echo "ok $((n += 1)) - planted object # SKIP no compiler"
fi
echo "1..$n"
exit $failed
