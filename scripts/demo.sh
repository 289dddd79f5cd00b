#!/bin/bash
# scripts/demo.sh: replay a short coding-agent session through txbox, in a throwaway
# workspace, and show what each command did to it.
#
# Needs no configuration, network or root.  Everything happens in a fresh directory made by
# mktemp under /var/tmp (else $TMPDIR): the workspace, and a fake $HOME that holds
# txbox's state and a planted fake secret.  Every destructive command targets only that
# workspace, and the directory is removed on exit.  Exits non-zero when a step does not do
# what txbox promises.
#
#   BUILD=build scripts/demo.sh      (what `make demo` runs)
set -eu

BUILD=${BUILD:-build}
if [ ! -x "$BUILD/txbox" ]; then
        echo "demo: $BUILD/txbox not found; build it first with: make $BUILD/txbox" >&2
        exit 1
fi
TXBOX=$(cd "$BUILD" && pwd)/txbox

# /var/tmp first: it is usually on disk, and the overlay's upper layer needs user xattrs,
# which tmpfs (a common /tmp and $TMPDIR) has only since Linux 6.6.
base=/var/tmp
[ -d "$base" ] && [ -w "$base" ] || base=${TMPDIR:-/tmp}
D=$(mktemp -d "$base/txbox-demo.XXXXXX")
cleanup() {
        cd /
        # The sandbox may have left directories without write permission in a layer.
        chmod -R u+rwX "$D" 2>/dev/null || true
        rm -rf "$D"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

WS=$D/ws
export HOME=$D/home
unset XDG_STATE_HOME # state goes to $HOME/.local/state/txbox, inside $D
mkdir -p "$WS" "$HOME"

if [ -t 1 ] && [ -z "${NO_COLOR:-}" ]; then
        B=$'\033[1m' G=$'\033[32m' Y=$'\033[33m' C=$'\033[36m' R=$'\033[31m' N=$'\033[0m'
else
        B='' G='' Y='' C='' R='' N=''
fi

# ---- helpers ----

# stamp VAR: microseconds since the epoch into VAR, without forking when bash can (bash >= 5).
stamp() {
        local t=${EPOCHREALTIME:-}
        if [ -n "$t" ]; then printf -v "$1" '%s' "${t//[!0-9]/}"; else printf -v "$1" '%s' $(($(date +%s%N) / 1000)); fi
}

die() {
        echo "${R}demo: $*${N}" >&2
        exit 1
}

# Indent captured output under a step line.
show() {
        [ -s "$1" ] && sed 's/^/      | /' "$1"
        return 0
}

# Field of the JSON record in $D/rec.json: json_str KEY, json_count ARRAY-NAME.
json_str() {
        grep -o "\"$1\": *\"[^\"]*\"" "$D/rec.json" | head -1 | sed 's/.*"\([^"]*\)"$/\1/'
}
json_count() {
        local inner
        inner=$(grep -o "\"$1\": *\[[^]]*\]" "$D/rec.json" | head -1 | sed 's/^[^[]*\[//; s/\]$//')
        if [ -z "$inner" ]; then echo 0; else printf '%s' "$inner" | tr -cd '"' | wc -c | awk '{print $1 / 2}'; fi
}

paint() {
        case $1 in
        committed) printf '%s' "$G$1$N" ;;
        rolled_back) printf '%s' "$Y$1$N" ;;
        pending) printf '%s' "$C$1$N" ;;
        *) printf '%s' "$R$1$N" ;;
        esac
}

n=0
# line NAME: print one step line from $D/rec.json (outcome, changes, tx id), with $rc and $ms.
line() {
        local ch
        TX=$(json_str tx)
        OUTCOME=$(json_str outcome)
        ch="+$(json_count added) ~$(json_count modified) -$(json_count deleted)"
        printf '%2d  %-36s %s%*s %-10s %4s  %-10s %6s ms\n' "$n" "$1" "$(paint "$OUTCOME")" \
                $((12 - ${#OUTCOME})) '' "$ch" "$rc" "$TX" "$ms"
        show "$D/out"
}

# step NAME EXPECTED-OUTCOME [RUN-OPTION...] -- PROGRAM [ARG...]: run one transaction in the
# workspace, print one line (step, outcome, changes, exit, tx id, wall time) and its output.
step() {
        local name=$1 want=$2 t0 t1
        shift 2
        n=$((n + 1)) rc=0
        rm -f "$D/rec.json"
        stamp t0
        "$TXBOX" run --report="$D/rec.json" "$@" >"$D/out" 2>&1 || rc=$?
        stamp t1
        ms=$(((t1 - t0) / 1000))
        if [ "$rc" -eq 125 ] || [ ! -s "$D/rec.json" ]; then
                show "$D/out" >&2
                die "step $n ($name): txbox could not run the command (status $rc)"
        fi
        line "$name"
        [ "$OUTCOME" = "$want" ] || die "step $n ($name): expected $want, got $OUTCOME"
}

# verb NAME EXPECTED-OUTCOME TX VERB [ARG...]: run txbox VERB on transaction TX and print the
# same kind of line, from TX's record afterwards.
verb() {
        local name=$1 want=$2 id=$3 t0 t1
        shift 3
        n=$((n + 1)) rc=0
        stamp t0
        "$TXBOX" "$@" >"$D/out" 2>&1 || rc=$?
        stamp t1
        ms=$(((t1 - t0) / 1000))
        "$TXBOX" show --json "$id" >"$D/rec.json" 2>&1 || die "txbox show --json $id failed: $(cat "$D/rec.json")"
        line "$name"
        [ "$rc" -eq 0 ] || die "step $n (txbox $*) failed with status $rc"
        [ "$OUTCOME" = "$want" ] || die "step $n ($name): expected $want, got $OUTCOME"
}

check() { # check DESCRIPTION COMMAND...
        local d=$1
        shift
        if "$@"; then echo "      ${G}ok${N}: $d"; else die "check failed: $d"; fi
}

tree_hash() { # names, types, modes, link targets and contents of the workspace (not .git)
        (cd "$WS" && find . -path ./.git -prune -o -printf '%p %y %m %l\n' | LC_ALL=C sort &&
                find . -path ./.git -prune -o -type f -print0 | LC_ALL=C sort -z | xargs -0r sha256sum) |
                sha256sum | cut -c1-16
}

median_ms() { # microsecond samples on stdin -> median in ms, one decimal
        sort -n | awk '{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
                printf "%.1f", m / 1000 }'
}

# ---- a small project, as an agent would find it ----

cd "$WS"
mkdir src
cat >src/greet.c <<'EOF'
#include <stdio.h>

void greet(const char *who) { printf("Hello, %s\n", who); }
EOF
cat >src/main.c <<'EOF'
void greet(const char *who);

int main(void) { greet("demo"); return 0; }
EOF
printf '# hello\n\nA tiny program for the txbox demo.\n' >README.md
if command -v git >/dev/null; then
        git -c init.defaultBranch=main init -q
        git add -A
        git -c user.name=demo -c user.email=demo@example.invalid commit -q -m "initial import"
        have_git=1
else
        have_git=0
fi
mkdir -m 700 "$HOME/.ssh"
echo "FAKE-PRIVATE-KEY-for-the-txbox-demo" >"$HOME/.ssh/id_demo"
chmod 600 "$HOME/.ssh/id_demo"

echo "${B}txbox demo${N}: $("$TXBOX" --version)"
echo "workspace  $WS"
echo "HOME       $HOME  (fake; holds txbox's state and a planted secret)"
[ "$have_git" = 1 ] || echo "(git not found: the workspace is not a git repository)"
echo
printf '%s #  %-36s %-12s %-10s %4s  %-10s %9s%s\n' "$B" step outcome changes exit tx "wall time" "$N"

# An edit that commits.
step "edit src/greet.c" committed -- sed -i 's/Hello, %s/Hello, %s!/' src/greet.c
EDIT_TX=$TX
check "the edit is in the workspace" grep -q 'Hello, %s!' src/greet.c

# A build that commits.
if command -v cc >/dev/null; then
        step "build: cc -o hello src/*.c" committed -- cc -O2 -o hello src/main.c src/greet.c
        check "hello is built and runs: $(./hello)" test "$(./hello)" = "Hello, demo!"
else
        step "build: generate version.h" committed -- sh -c 'echo "#define VERSION \"0.1\"" >src/version.h'
        check "src/version.h is in the workspace" test -f src/version.h
fi

# A failing test run: its changes are rolled back.
step "test run that fails" rolled_back -- sh -c 'echo log > test.log; exit 1'
check "test.log was rolled back" test ! -e test.log

# A mass deletion by a failing command: rolled back, the tree intact.
before=$(tree_hash)
step "rm -rf src, then fail" rolled_back -- sh -c 'rm -rf src; exit 1'
check "the tree is intact (hash $before before and after)" test "$(tree_hash)" = "$before"

# The policy: rm -rf ~ is refused before it runs (HOME is the demo's fake home anyway).
step "rm -rf ~" denied -- sh -c 'rm -rf ~'
check "refused by rule $(json_str rule): nothing ran" test -d "$HOME/.ssh"

# An obfuscated deletion: the pre-run check sees through base64 | sh.
step "echo cm0gLXJmIH4K | base64 -d | sh" denied -- sh -c 'echo cm0gLXJmIH4K | base64 -d | sh'
check "refused by rule $(json_str rule)" test -d "$HOME/.ssh"

# A deletion hidden in a script file: the pre-run check cannot see it, the exec check can.
step "write scripts/clean.sh" committed -- sh -c 'mkdir -p scripts && printf "#!/bin/sh\necho cleaning\nrm -rf \"\$HOME\"\n" >scripts/clean.sh && chmod +x scripts/clean.sh'
step "./scripts/clean.sh (rm -rf \$HOME inside)" rolled_back -- ./scripts/clean.sh
check "caught at exec by rule $(json_str rule); the home is intact" test -d "$HOME/.ssh"

# A mass deletion by a command that exits 0: the effect rule rolls it back.
step "generate 40 test fixtures" committed -- sh -c 'mkdir -p fixtures && for i in $(seq 1 40); do echo "$i" >"fixtures/f$i.txt"; done'
before=$(tree_hash)
step "find . -name '*.txt' -delete (exits 0)" rolled_back -- sh -c "find . -name '*.txt' -delete"
check "rolled back by effect rule $(grep -o '"rule": "[a-z-]*"' "$D/rec.json" | tail -1 | cut -d'"' -f4); the files are back" test "$(tree_hash)" = "$before"

# A search for secrets in $HOME: the policy refuses reading key files by name, and a plain
# search finds nothing, because the sandbox hides ~/.ssh and the other credential stores.
step "cat ~/.ssh/id_demo" denied -- cat "$HOME/.ssh/id_demo"
check "refused by rule $(json_str rule)" true
step "grep -rl PRIVATE-KEY ~ (a search)" rolled_back -- grep -rl PRIVATE-KEY "$HOME"
check "the search found nothing: ~/.ssh is empty inside the sandbox" test "$(grep -c id_demo "$D/out" || true)" = 0
check "the secret is still there outside the sandbox" grep -q FAKE-PRIVATE-KEY "$HOME/.ssh/id_demo"

# Keep a change pending, look at it, then commit it.
step "append to README.md, keep pending" pending --commit=keep -- \
        sh -c 'printf "\nBuild: cc -o hello src/main.c src/greet.c\n" >>README.md'
KEEP_TX=$TX
check "nothing applied while pending" test "$(grep -c '^Build:' README.md || true)" = 0
verb "txbox diff (the pending change)" pending "$KEEP_TX" diff "$KEEP_TX"
verb "txbox commit" committed "$KEEP_TX" commit "$KEEP_TX"
check "README.md now has the Build line" grep -q '^Build:' README.md

# Undo the edit of step 1 (later transactions did not touch src/greet.c).
verb "txbox undo (step 1's edit)" undone "$EDIT_TX" undo "$EDIT_TX"
if [ "$have_git" = 1 ]; then
        check "src/greet.c is the committed git version again" git diff --quiet -- src/greet.c
else
        check "src/greet.c has its original text again" grep -q 'Hello, %s\\n' src/greet.c
fi

# The audit log.
echo
echo "${B}txbox log${N}"
"$TXBOX" log | sed 's/^/  /'

# The cost of a transaction: txbox run -- true against sh -c true, alternating.
: >"$D/tx.us"
: >"$D/sh.us"
t0=0 t1=0 t2=0
for _ in 1 2 3 4 5 6 7 8 9 10; do
        stamp t0
        "$TXBOX" run -- true
        stamp t1
        sh -c true
        stamp t2
        echo $((t1 - t0)) >>"$D/tx.us"
        echo $((t2 - t1)) >>"$D/sh.us"
done
tx_ms=$(median_ms <"$D/tx.us")
sh_ms=$(median_ms <"$D/sh.us")
echo
echo "${B}cost per command${N} (median of 10 each, alternating)"
printf '  txbox run -- true   %6s ms\n' "$tx_ms"
printf '  sh -c true          %6s ms\n' "$sh_ms"
printf '  txbox adds          %6s ms\n' "$(awk -v a="$tx_ms" -v b="$sh_ms" 'BEGIN { printf "%.1f", a - b }')"
echo
echo "demo passed; removing $D"
