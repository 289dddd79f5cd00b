#!/bin/bash
# Run the test suites: tests/run.sh [unit|lint|fuzz|integration|clients|corpus|all] (unit includes
# lint and the fuzz corpus replay).  Integration tests run inside an
# outer jail (tests/jail.sh); as root, once as root and once as uid 54321.
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
what=${1:-all}
pass=0 fail=0 skip=0
failed=()

tap_count() { # name, file with TAP output
        local p f s
        p=$(grep -cE '^ok ' "$2")
        f=$(grep -cE '^not ok ' "$2")
        s=$(grep -cE '^ok .*# SKIP' "$2")
        pass=$((pass + p - s)) fail=$((fail + f)) skip=$((skip + s))
        [ "$f" -gt 0 ] && failed+=("$1")
        return 0
}

run_one() { # name, command...
        local name=$1 out rc t0=$SECONDS
        shift
        out=$(mktemp)
        "$@" >"$out" 2>&1
        rc=$?
        sed "s/^/    /" "$out" | grep -E '^    (not ok|#|Bail)' | head -40
        tap_count "$name" "$out"
        if [ $rc -ne 0 ] && ! grep -q '^not ok' "$out"; then
                echo "    $name exited with status $rc without a failing test:"; tail -20 "$out" | sed 's/^/      /'
                fail=$((fail + 1)) failed+=("$name")
        fi
        if ! grep -qE '^1\.\.[0-9]+' "$out"; then
                echo "    $name printed no TAP plan"; fail=$((fail + 1)) failed+=("$name")
        fi
        echo "  $name: $(grep -cE '^ok ' "$out") ok, $(grep -cE '^not ok ' "$out") not ok ($((SECONDS - t0)) s)"
        rm -f "$out"
}

# The unit test programs and fuzz replays are built by make test-bins (make unit, make check),
# not by make all: one missing, or older than a file it is built from, is a failure here, not
# a skip or a run of code that is no longer the tree's.
stale() { # name, program, the files it is built from...
        local name=$1 prog=$2 f why=""
        shift 2
        if [ ! -x "$prog" ]; then why="no $prog"
        else for f; do [ "$f" -nt "$prog" ] && { why="$prog is older than $f"; break; }; done; fi
        [ -z "$why" ] && return 1
        echo "  $name: $why: build it with the make that built $BUILD, target test-bins (make test-bins;"
        echo "  make SANITIZE=1 test-bins for build-san); make unit and make check build it themselves"
        fail=$((fail + 1)) failed+=("$name")
}

if [ "$what" = all ] || [ "$what" = unit ]; then
        echo "unit tests ($BUILD/tests)"
        for src in tests/unit/test_*.c; do
                t=$BUILD/tests/$(basename "$src" .c)
                stale "unit/$(basename "$t")" "$t" "$src" tests/unit/*.h "$BUILD/testing/libtxbox.a" && continue
                run_one "unit/$(basename "$t")" "$t"
                if [ "$(id -u)" -eq 0 ] && grep -q "as-user" "tests/unit/$(basename "$t").c" 2>/dev/null; then
                        d=$(mktemp -d "${TMPDIR:-/var/tmp}/txbox-unit.XXXXXX"); cp "$t" "$d/"; mkdir "$d/tmp"
                        chmod 755 "$d" "$d/$(basename "$t")"; chown 54321:54321 "$d/tmp"
                        run_one "unit/$(basename "$t") (uid 54321)" setpriv --reuid=54321 --regid=54321 --clear-groups \
                                env TMPDIR="$d/tmp" "$d/$(basename "$t")"
                        rm -rf "$d"
                fi
        done
fi

if [ "$what" = all ] || [ "$what" = unit ]; then
        # The policy's shell parser against bash's own reading (tests/corpus/shparse.txt).
        echo "shell parser against bash (tests/corpus/shparse.sh)"
        run_one "unit/shparse" env BUILD="$BUILD" tests/corpus/shparse.sh
fi

if [ "$what" = all ] || [ "$what" = unit ] || [ "$what" = lint ]; then
        # The layers of the code (scripts/layers.sh) on the sources and the built objects, and
        # that the check refuses an edge planted in a copy.
        echo "lint (tests/lint)"
        for t in tests/lint/t_*.sh; do
                run_one "lint/$(basename "$t")" env BUILD="$BUILD" bash "$t"
        done
fi

if [ "$what" = all ] || [ "$what" = unit ] || [ "$what" = fuzz ]; then
        # The fuzz targets' corpora and the inputs that once crashed them, replayed with a
        # plain main() (no clang needed; make fuzz runs the real campaigns).
        echo "fuzz corpus replay ($BUILD/fuzz)"
        for src in tests/fuzz/fuzz_*.c; do
                name=$(basename "$src" .c) name=${name#fuzz_} t=$BUILD/fuzz/replay_$name
                # (the hook target also links three CLI objects: FUZZ_EXTRA_hook in the Makefile)
                extra=()
                [ "$name" = hook ] && extra=("$BUILD"/src/cli/{cmd_hook,hook_edit,common}.o)
                stale "fuzz/$name" "$t" "$src" tests/fuzz/replay.c tests/fuzz/fuzz.h "${extra[@]}" "$BUILD/libtxbox-int.a" &&
                        continue
                run_one "fuzz/$name" "$t" "tests/fuzz/corpus/$name" "tests/fuzz/crashers/$name"
        done
fi

if [ "$what" = all ] || [ "$what" = integration ]; then
        modes="user"
        [ "$(id -u)" -eq 0 ] && modes="root user"
        for mode in $modes; do
                echo "integration tests (jailed as $mode)"
                for t in tests/integration/t_*.sh; do
                        run_one "integration/$(basename "$t") [$mode]" env BUILD="$BUILD" JAIL_MODE="$mode" bash "$t"
                done
        done
fi

if [ "$what" = all ] || [ "$what" = clients ]; then
        # The real MCP clients (the inspector and the TypeScript SDK against txbox mcp) when
        # make check-clients has installed them; the agents themselves (Claude Code, Codex,
        # Gemini CLI: minutes each) only in make check-clients.  A clear skip otherwise.
        echo "real MCP clients (tests/clients, optional)"
        run_one "clients/run.sh" env BUILD="$BUILD" TXBOX_CLIENTS_INSTALL=0 \
                TXBOX_CLIENTS_ONLY="${TXBOX_CLIENTS_ONLY:-inspector sdk}" tests/clients/run.sh
fi

if [ "$what" = all ] || [ "$what" = corpus ]; then
        # Optional: the public corpora in ../shared/corpus; the suite skips when they are absent.
        echo "policy corpus suite (optional)"
        run_one "corpus/run.sh" env BUILD="$BUILD" tests/corpus/run.sh
        run_one "corpus/shparse.sh" env BUILD="$BUILD" tests/corpus/shparse.sh --corpus
fi

echo
[ ${#failed[@]} -gt 0 ] && printf 'failed: %s\n' "${failed[@]}"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
