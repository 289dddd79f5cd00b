#!/bin/bash
# The policy engine's files and who calls whom:
#   scripts/policy_graph.sh [--objects BUILD | --edges FILE] [-v]
#
# Reads the objects of src/lib/policy/ in BUILD (default build; make all first) and finds,
# for every function or datum one object refers to, the object that defines it: an edge
# FROM -> TO between two files.  Files that reach each other through edges form a circle
# (a strongly connected component).  A circle makes a part impossible to read, test or
# replace alone: the unwrapper that called back into the parser, which called the
# unwrapper, is what issue 34 took apart.
#
# The one circle allowed is the shell parser's own (PARSER below): one recursive descent
# split by job, whose parts share its state (parse_int.h).  Any other circle, or a circle
# that takes in a file outside PARSER, fails the check: exit 1 with one line per circle.
# -v prints every edge ("FROM -> TO") and every circle, allowed or not; --edges FILE reads
# the edges ("FROM TO" lines) from FILE instead of objects (tests plant edges so).  Exit 0
# when clean, 2 when there is nothing to read.
# make check runs it (tests/lint/t_policy_graph.sh).
set -u

objects=build
edgefile=""
verbose=0
while [ $# -gt 0 ]; do
        case $1 in
        --objects) objects=$2; shift 2 ;;
        --edges) edgefile=$2; shift 2 ;;
        -v) verbose=1; shift ;;
        -h | --help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "policy_graph: unknown argument '$1' (--help)" >&2; exit 2 ;;
        esac
done

# The parser's parts, which may call one another (file names without .c).
PARSER="parse parse_emit parse_expand parse_simple parse_word"

dir="$objects/src/lib/policy"
if [ -n "$edgefile" ]; then
        edges=$(sort -u "$edgefile") || exit 2
        what="edges in $edgefile"
else
        # objects of sources that are gone (a file split or renamed) are left out
        src=$(cd "$(dirname "$0")/../src/lib/policy" && pwd)
        mapfile -t objs < <(cd "$dir" 2>/dev/null && find . -maxdepth 1 -name '*.o' | sed 's|^\./||' |
                while read -r o; do [ -f "$src/${o%.o}.c" ] && echo "$o"; done | sort)
        [ ${#objs[@]} -gt 0 ] || { echo "policy_graph: no objects in '$dir' (make all first)" >&2; exit 2; }
        edges=$(cd "$dir" && nm -P -A "${objs[@]}" |
                awk '{o = $1; sub(/:$/, "", o); sub(/\.o$/, "", o)}
                     $3 ~ /^[TDBRVWC]$/ {def[$2] = o; next}
                     $3 == "U" {use[$2] = use[$2] " " o}
                     END {for (s in use) if (s in def) {n = split(use[s], u, " ")
                             for (i = 1; i <= n; i++) if (u[i] != def[s]) print u[i], def[s]}}' | sort -u)
        what="${#objs[@]} objects in $dir"
fi

[ $verbose = 1 ] && sed 's/ / -> /' <<<"$edges"

# Circles: files that reach each other (transitive closure; a few dozen files).
circles=$(awk -v parser="$PARSER" '
        { if (!($1 in id)) { id[$1] = ++n; name[n] = $1 }
          if (!($2 in id)) { id[$2] = ++n; name[n] = $2 }
          r[id[$1], id[$2]] = 1 }
        END {
                for (k = 1; k <= n; k++) for (i = 1; i <= n; i++) if (r[i, k])
                        for (j = 1; j <= n; j++) if (r[k, j]) r[i, j] = 1
                np = split(parser, p, " "); for (i = 1; i <= np; i++) inparser[p[i]] = 1
                for (i = 1; i <= n; i++) {
                        if (done[i] || !r[i, i]) continue
                        line = ""; ok = 1
                        for (j = 1; j <= n; j++) if (j == i || (r[i, j] && r[j, i])) {
                                done[j] = 1; line = line " " name[j]
                                if (!(name[j] in inparser)) ok = 0
                        }
                        print (ok ? "allowed" : "circle") ":" line
                }
        }' <<<"$edges" | sort)

fail=0
while IFS= read -r c; do
        [ -n "$c" ] || continue
        c="${c%%:*}: $(tr ' ' '\n' <<<"${c#*: }" | sort | xargs)"
        case $c in
        allowed:*) [ $verbose = 1 ] && echo "policy_graph: the parser's own circle:${c#allowed:}" ;;
        *) echo "policy_graph: files in src/lib/policy/ call one another in a circle:${c#circle:}"; fail=1 ;;
        esac
done <<<"$circles"
[ $fail = 0 ] && [ $verbose = 1 ] && echo "policy_graph: clean ($what)"
exit $fail
