#!/bin/bash
# Docs that stay true: the README's tour ("A 60-second tour") and the man page's EXAMPLES,
# replayed command by command in a throwaway home, and what txbox prints compared with what
# the docs show.  A doc that no longer matches fails here.
#
# What is compared: every line a "$ COMMAND" of the docs is followed by, against what the
# command printed (stdout and stderr as a terminal shows them), after normalising what
# differs from run to run: transaction ids (each id the docs show is mapped to the one this
# run made, in the order they appear, and a prefix the docs type is replaced by this run's
# id), times and dates, durations in ms, Unix times in ms, the home directory (the docs'
# /home/me) and runs of spaces (table columns).  Commands run in a fresh bash each, in the
# directory the previous one left.
#
# Directives, invisible to readers: in the README an HTML comment, in the man page a roff
# comment:   docs-test: setup: COMMAND   runs COMMAND first (the docs take it for granted,
# e.g. a key in ~/.ssh), its output not compared;   docs-test: skip   does not run the next
# command (one that cannot run here: /srv, a build), saying so.
. "$(dirname "$0")/lib.sh"

export PATH="$T/bin:$PATH"
DOCHOME=/home/me

# extract FILE KIND: the transcript as lines "S\tcmd" (setup), "K" (skip the next command),
# "C\tcmd" (a command) and "E\tline" (an expected line of the last command).
extract() {
        if [ "$2" = readme ]; then
                awk '
                /^## A 60-second tour/ { on = 1; next }
                on && /^## / { exit }
                !on { next }
                /^```/ { fence = !fence; next }
                !fence && match($0, /<!-- docs-test: setup: .* -->/) {
                        s = $0; sub(/.*<!-- docs-test: setup: /, "", s); sub(/ -->.*/, "", s); print "S\t" s; next }
                !fence && /<!-- docs-test: skip -->/ { print "K"; next }
                fence && /^\$ / { print "C\t" substr($0, 3); next }
                fence { print "E\t" $0 }' "$1"
        else
                awk '
                /^\.SH EXAMPLES/ { on = 1; next }
                on && /^\.SH / { exit }
                !on { next }
                /^\.EX/ { fence = 1; next }
                /^\.EE/ { fence = 0; next }
                /^\.\\" docs-test: setup: / { s = $0; sub(/^\.\\" docs-test: setup: /, "", s); print "S\t" s; next }
                /^\.\\" docs-test: skip/ { print "K"; next }
                !fence { next }
                { gsub(/\\-/, "-"); gsub(/\\\(aq/, "\047"); gsub(/\\\(dq/, "\""); gsub(/\\&/, "");
                  gsub(/\\e/, "\\") }
                /^\$ / { print "C\t" substr($0, 3); next }
                { print "E\t" $0 }' "$1"
        fi
}

# What differs from run to run, made the same on both sides (ids are mapped before).
normalise() {
        sed -E -e "s#$HOME#$DOCHOME#g" \
                -e 's/[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}/TIME/g' \
                -e 's/[0-9]+ ms/N ms/g' -e 's/"(started_ms|duration_ms|start_ms|time_ms)": [0-9]+/"\1": N/g' \
                -e 's/ +/ /g' -e 's/ $//'
}

declare -A idmap # the docs' id -> this run's
ids() { grep -oE '\b[0-9a-f]{10}\b' | awk '!seen[$0]++'; }
# Map the ids the expected lines show to those the run printed, in order of appearance.
learn_ids() { # EXPECTED ACTUAL
        local -a e a
        mapfile -t e < <(printf '%s\n' "$1" | ids)
        mapfile -t a < <(printf '%s\n' "$2" | ids)
        for i in "${!e[@]}"; do
                [ -n "${idmap[${e[$i]}]:-}" ] || [ -z "${a[$i]:-}" ] || idmap[${e[$i]}]=${a[$i]}
        done
}
# A command of the docs with every id (or id prefix of 4 or more) it names replaced by this run's.
map_cmd() {
        local cmd=$1 w d
        for w in $(printf '%s\n' "$cmd" | grep -oE '\b[0-9a-f]{4,10}\b'); do
                for d in "${!idmap[@]}"; do
                        case $d in "$w"*) cmd=${cmd//$w/${idmap[$d]}}; break ;; esac
                done
        done
        printf '%s' "$cmd"
}
# This run's ids in ACTUAL written as the docs' (ids the docs never showed stay as they are).
unmap_out() {
        local out=$1 d
        for d in "${!idmap[@]}"; do out=${out//${idmap[$d]}/$d}; done
        printf '%s' "$out"
}

replay() { # FILE KIND NAME
        local cwd="$HOME" kind rest cmd="" expect="" skip=0 n=0
        idmap=()
        run_one() {
                [ -n "$cmd" ] || return 0
                n=$((n + 1))
                if [ $skip = 1 ]; then
                        skip "$3: \$ $cmd" "the docs show it; it cannot run here"
                        skip=0 cmd="" expect=""
                        return 0
                fi
                local real out want got
                real=$(map_cmd "$cmd")
                out=$(cd "$cwd" && bash -c 'eval "$1"; rc=$?; pwd >"$2"; exit $rc' _ "$real" "$T/cwd" 2>&1)
                cwd=$(cat "$T/cwd")
                learn_ids "$expect" "$out"
                want=$(printf '%s' "$expect" | normalise)
                got=$(unmap_out "$out" | normalise)
                if [ "$got" = "$want" ]; then
                        echo "ok $((_n += 1)) - $3: \$ $cmd"
                else
                        echo "not ok $((_n += 1)) - $3: \$ $cmd"
                        diff <(printf '%s\n' "$want") <(printf '%s\n' "$got") | sed 's/^/#   /'
                        _failed=$((_failed + 1))
                fi
                cmd="" expect=""
        }
        while IFS=$'\t' read -r kind rest; do
                case $kind in
                S) run_one "$@"; (cd "$cwd" && bash -c "$rest") >/dev/null 2>&1 ;;
                K) run_one "$@"; skip=1 ;;
                C) run_one "$@"; cmd=$rest ;;
                E) expect+=${expect:+$'\n'}$rest ;;
                esac
        done < <(extract "$1" "$2")
        run_one "$@"
        echo "# $3: $n commands replayed"
}

# Each document in a home of its own.
fresh_home() {
        chmod -R u+rwX "$HOME" 2>/dev/null
        rm -rf "$HOME" && mkdir -p "$HOME"
}

fresh_home
replay "$T/docs/README.md" readme "README tour"
fresh_home
replay "$T/docs/txbox.1" man "txbox(1) EXAMPLES"

# The check itself: a doc that drifts fails.
printf '## A 60-second tour\n```\n$ echo one\ntwo\n```\n## next\n' >"$T/drift.md"
out=$( (_n=0 _failed=0; replay "$T/drift.md" readme drift; echo "failed=$_failed") )
like "$out" 'not ok 1 - drift: \$ echo one' "a doc whose output drifted fails"
like "$out" 'failed=1' "and counts as a failure"

done_testing
