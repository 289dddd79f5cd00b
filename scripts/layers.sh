#!/bin/bash
# The layers of txbox's code, checked: scripts/layers.sh [--root DIR] [--objects BUILD] [-v]
#
# Read top-down, each layer uses only the layers below it:
#
#   cli      src/cli: the verbs
#   faces    the library's other faces on a transaction: MCP, the agent loop, commands, reports
#   txn      transactions, sessions, undo, gc, queries: the state dir and the decision
#   policy   the policy engine, effect rules, approvals, fail-closed judgement
#   store    changesets, the journal, the audit log, records        } side by side: neither
#   sandbox  the sandbox, its guards, limits, cgroup, network proxy } uses the other
#   base     helpers (one job to a file), raw system calls, sha256, the public txbox.h (declarations only)
#
# Two checks, each against TABLE below (every source file must be in it):
#   - includes: a file's #include "..." must name a header of its own layer or of a lower
#     one, and a header private to a directory (PRIVATE) is included only from inside it;
#   - symbols (--objects BUILD, after a build): an object may only refer to functions and
#     data defined in objects of its own or a lower layer.  This catches what includes cannot:
#     txbox.h declares every public function, and most files include it.
# Any edge that breaks a rule fails the check unless ALLOW lists it with the reason; two
# layers that use each other fail it even then.  Exit 0 when clean, 1 with one line per
# broken rule.  make layers runs it; make check runs it too (tests/lint/t_layers.sh).
set -u

root=.
objects=""
verbose=0
while [ $# -gt 0 ]; do
        case $1 in
        --root) root=$2; shift 2 ;;
        --objects) objects=$2; shift 2 ;;
        -v) verbose=1; shift ;;
        -h | --help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "layers: unknown argument '$1' (--help)" >&2; exit 2 ;;
        esac
done

# Layer and rank: a file may use its own layer and any layer of a lower rank.  store and
# sandbox share a rank: side by side, neither may use the other.
RANKS="base:0 store:1 sandbox:1 policy:2 txn:3 faces:4 cli:5"

# Every source file (path without .c or .h; shell patterns allowed, first match wins) and
# its layer.  Each lib file's directory (src/lib/LAYER/) is its layer.
TABLE='
include/txbox               base     the public API: types and declarations, no code
src/lib/base/syscalls       base
src/lib/base/sha256         base
src/lib/base/*              base
src/lib/store/changeset     store
src/lib/store/journal       store
src/lib/store/audit         store
src/lib/store/record        store
src/lib/store/*             store
src/lib/sandbox/sandbox     sandbox
src/lib/sandbox/guard       sandbox
src/lib/sandbox/exectarget  sandbox  what an exec will run, for the guard
src/lib/sandbox/limits      sandbox
src/lib/sandbox/reslimits   sandbox
src/lib/sandbox/netproxy    sandbox
src/lib/sandbox/cgroup      sandbox
src/lib/sandbox/*           sandbox  the rest of the folder: the parts sandbox.c is split into
src/lib/policy/policy       policy   policy.h, the engine'"'"'s public header
src/lib/policy/effects      policy
src/lib/policy/approve      policy
src/lib/policy/judge        policy   generic (fail-closed judgement); its only users are above
src/lib/policy/gitwork      policy   the git repository (refs, ignore rules, integrity), read for the effect rules only
src/lib/policy/gitobj       policy   the git object store (loose, packs), read for the effect rules only
src/lib/policy/loss         policy   the loss model of the effect rules
src/lib/policy/*            policy
src/lib/txn/tx              txn
src/lib/txn/session         txn
src/lib/txn/undo            txn
src/lib/txn/txpolicy        txn
src/lib/txn/query           txn
src/lib/txn/gc              txn
src/lib/txn/logrepair       txn      rebuilds lost audit rows from the state dir
src/lib/txn/*               txn
src/lib/faces/mcp           faces
src/lib/faces/agent         faces
src/lib/faces/command       faces
src/lib/faces/curlapi       faces
src/lib/faces/report        faces
src/lib/faces/doctor        faces    txbox doctor: probes through the sandbox and a workspace
src/lib/faces/*             faces
src/cli/*                   cli
'

# Headers private to their directory: included only by files inside it.
PRIVATE='
src/lib/policy/pol.h
src/lib/policy/vars.h
src/lib/policy/feeds.h
src/lib/policy/pathclass.h
src/lib/policy/parse_int.h
src/lib/policy/tools.h
src/lib/policy/loss.h
src/lib/sandbox/sandbox_int.h
src/lib/faces/mcp_int.h
src/lib/faces/agent_int.h
'

# A header listed above, or any NAME_int.h (a split file's internal header), is private.
private() { grep -qx "$1" <<<"$PRIVATE" || [[ $1 == *_int.h ]]; }

# Known edges that break a rule today: "FROM TO" (files, or objects' sources for symbols),
# each with why it is tolerated.  Remove a line when its edge goes; a new edge is refused.
ALLOW='
'

fail=0
bad() {
        echo "layers: $*"
        fail=1
}

declare -A rank_of
for r in $RANKS; do
        rank_of[${r%%:*}]=${r#*:}
done

declare -A layer_of # path without .c, .h or .o -> its layer ("" when TABLE has none)
layer() { # path: sets LAYER
        local p=${1%.[cho]} pat lay _
        if [ -z "${layer_of[$p]+x}" ]; then
                layer_of[$p]=""
                while read -r pat lay _; do
                        # shellcheck disable=SC2053 # the table's patterns are globs
                        if [ -n "$pat" ] && [[ $p == $pat ]]; then
                                layer_of[$p]=$lay
                                break
                        fi
                done <<<"$TABLE"
        fi
        LAYER=${layer_of[$p]}
}

allowed() { # from to
        local a b _
        while read -r a b _; do
                [ "$a" = "$1" ] && [ "$b" = "$2" ] && return 0
        done <<<"$ALLOW"
        return 1
}

declare -A uses # "layerA layerB" -> one edge that made it, for the loop check
edge() { # kind from to
        local kind=$1 from=$2 to=$3 lf lt
        layer "$from"; lf=$LAYER
        layer "$to"; lt=$LAYER
        [ -z "$lf" ] || [ -z "$lt" ] || [ "$lf" = "$lt" ] && return 0
        uses["$lf $lt"]="$from -> $to"
        [ "${rank_of[$lf]}" -gt "${rank_of[$lt]}" ] && return 0
        if allowed "$from" "$to"; then
                [ $verbose = 1 ] && echo "layers: allowed: $from ($lf) $kind $to ($lt)"
                return 0
        fi
        local how=upward
        [ "${rank_of[$lf]}" -eq "${rank_of[$lt]}" ] && how=sideways
        bad "$from ($lf) $kind $to ($lt): $how, against the layers (scripts/layers.sh)"
}

cd "$root" || exit 2
mapfile -t files < <(find include src/lib src/cli -name '*.[ch]' | sort)
[ ${#files[@]} -gt 0 ] || { echo "layers: no sources under '$root'" >&2; exit 2; }

for f in "${files[@]}"; do
        layer "$f"
        [ -n "$LAYER" ] || bad "$f has no layer: add it to TABLE in scripts/layers.sh"
done

# Includes: "x.h" resolves beside the file first, then through -Iinclude -Isrc/lib (and
# -Isrc/cli for the fuzz targets), as the compiler looks.
for f in "${files[@]}"; do
        dir=${f%/*}
        while read -r h; do
                to=""
                for d in "$dir" include src/lib src/cli; do
                        if [ -f "$d/$h" ]; then
                                to=$(realpath -m --relative-to=. "$d/$h")
                                break
                        fi
                done
                [ -n "$to" ] || continue # a system header in quotes, or generated
                edge includes "$f" "$to"
                if private "$to" && [ "${f%/*}" != "${to%/*}" ] && ! allowed "$f" "$to"; then
                        bad "$f includes $to, private to ${to%/*}/"
                elif private "$to" && [ "${f%/*}" != "${to%/*}" ] && [ $verbose = 1 ]; then
                        echo "layers: allowed: $f includes $to, private to ${to%/*}/"
                fi
        done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
done

# Symbols: which object defines what each object refers to.
if [ -n "$objects" ]; then
        mapfile -t objs < <(cd "$objects" && find src/lib src/cli -name '*.o' | sort)
        [ ${#objs[@]} -gt 0 ] || { echo "layers: no objects under '$objects/src'" >&2; exit 2; }
        declare -A refs
        while read -r from to; do
                edge "refers to" "$from" "$to"
                refs["$from $to"]=1
        done < <(cd "$objects" && nm -P -A "${objs[@]}" |
                awk '{o = $1; sub(/:$/, "", o)}
                     $3 ~ /^[TDBRVWC]$/ {def[$2] = o; next}
                     $3 == "U" {use[$2] = use[$2] " " o}
                     END {for (s in use) if (s in def) {n = split(use[s], u, " ")
                             for (i = 1; i <= n; i++) print u[i], def[s]}}' |
                sed 's/\.o / /; s/\.o$//' | sort -u)
fi

# Two layers that use each other are one layer, whatever ALLOW says.
for k in "${!uses[@]}"; do
        read -r a b <<<"$k"
        if [[ "$a" < "$b" ]] && [ -n "${uses["$b $a"]+x}" ]; then
                bad "layers $a and $b use each other: ${uses[$k]} and ${uses["$b $a"]}"
        fi
done

# Inside a layer, files that call each other are allowed (tx, session, undo and txpolicy
# still do); -v lists them.
if [ $verbose = 1 ] && [ -n "$objects" ]; then
        for k in "${!refs[@]}"; do
                read -r a b <<<"$k"
                if [[ "$a" < "$b" ]] && [ -n "${refs["$b $a"]+x}" ]; then
                        echo "layers: note: $a and $b call each other"
                fi
        done | sort
fi

if [ $fail = 0 ] && [ $verbose = 1 ]; then
        echo "layers: clean (${#files[@]} files${objects:+, objects in $objects})"
fi
exit $fail
