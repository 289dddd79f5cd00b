# txbox: plain GNU Makefile.  `make` builds build/txbox; `make check` runs every test.
PREFIX ?= /usr/local
BUILD  ?= build
CC     ?= gcc
OBJCOPY ?= objcopy
PKGS   := libseccomp sqlite3 jansson libfyaml zlib libcurl

# Library headers as system headers: libcurl's .pc adds -I/usr/include/<multiarch>, which would
# otherwise make glibc's own headers warn under -Werror.
PKG_CFLAGS := $(patsubst -I%,-isystem %,$(shell pkg-config --cflags $(PKGS) 2>/dev/null))
# libcurl is only compiled against: txbox agent loads it at run time (src/lib/faces/curlapi.c), so
# that no other verb pays for its thirty-odd shared libraries at start-up.
PKG_LIBS   := $(shell pkg-config --libs $(filter-out libcurl,$(PKGS)) 2>/dev/null)
# Linked in statically (Debian's own .a files; glibc stays shared): every transaction, hook
# call and MCP start is a fresh process, and resolving four shared libraries cost it about
# 0.7 ms (docs/BENCHMARKS.md).  STATIC_LIBS=0 links them dynamically.  zlib reads git's
# objects for the effect rules (src/lib/policy/gitobj.c).
STATIC_LIBS ?= 1
ifeq ($(STATIC_LIBS),1)
PKG_LIBS   := -Wl,-Bstatic $(filter-out -lm,$(shell pkg-config --static --libs $(filter-out libcurl,$(PKGS)) \
              2>/dev/null)) -Wl,-Bdynamic -lm
endif

WARN   := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2 \
          -Wno-missing-field-initializers
CFLAGS ?= -O2 -g
CFLAGS += -std=gnu11 $(WARN) -fvisibility=hidden -fstack-protector-strong -Iinclude -Isrc/lib \
          $(PKG_CFLAGS)
ifeq ($(FUZZ),1)
# The libFuzzer build (make fuzz): clang, every object instrumented for coverage, ASan and
# UBSan; only the fuzz targets link libFuzzer's main.
BUILD  := build-fuzz
CC     := clang
CFLAGS += -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS += -fsanitize=address,undefined
else ifeq ($(SANITIZE),1)
BUILD  := build-san
CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDFLAGS += -fsanitize=address,undefined
else
CFLAGS += -D_FORTIFY_SOURCE=3
endif
LDLIBS := $(PKG_LIBS)

LIB_SRC  := $(wildcard src/lib/*/*.c)
CLI_SRC  := $(wildcard src/cli/*.c)
UNIT_SRC := $(wildcard tests/unit/test_*.c)
# The built-in policy (src/lib/policy/default.yml), read by the policy loader when txbox is
# built (scripts/policygen.c) and compiled in as C: a start-up parses no YAML.
GEN_OBJ  := $(BUILD)/gen/builtin_policy.o
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o) $(GEN_OBJ)
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/%.o)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
# Test hooks (failpoint(), which can kill, crash or hang txbox from an environment variable,
# and TXBOX_TEST_* variables) are compiled only into a test variant, $(BUILD)/testing/txbox:
# the release build/txbox has none (tests/lint/t_release.sh checks its symbols).  Only the
# sources that hold a hook are compiled twice; the tests that need hooks use the variant.
HOOK_SRC := $(shell grep -lw -e failpoint -e TXBOX_TESTING $(LIB_SRC) $(CLI_SRC) 2>/dev/null)
TEST_OBJ := $(filter-out $(HOOK_SRC:%.c=$(BUILD)/%.o),$(LIB_OBJ) $(CLI_OBJ)) $(HOOK_SRC:%.c=$(BUILD)/testing/%.o)
TEST_LIB_OBJ := $(filter-out $(CLI_SRC:%.c=$(BUILD)/%.o) $(CLI_SRC:%.c=$(BUILD)/testing/%.o),$(TEST_OBJ))
TEST_CLI_OBJ := $(filter-out $(TEST_LIB_OBJ),$(TEST_OBJ))
# Each object and test binary depends on the headers it includes, as the compiler saw them
# (-MMD writes BUILD/....d beside it; -MP keeps a deleted header from stopping the build).
# Objects also depend on this Makefile, which holds the flags.
DEPFLAGS  = -MMD -MP -MF $@.d
# Fuzz targets (tests/fuzz/fuzz_NAME.c): each builds twice, as a libFuzzer binary with clang
# (make fuzz) and with a plain main() that replays its corpus (make check, any compiler).
FUZZ_TARGETS := shell argv policy hook mcp gitobj gitconfig ast
REPLAY_BIN   := $(FUZZ_TARGETS:%=$(BUILD)/fuzz/replay_%)
# The hook target calls the CLI's hook_answer().
FUZZ_EXTRA_hook := $(BUILD)/src/cli/cmd_hook.o $(BUILD)/src/cli/hook_edit.o $(BUILD)/src/cli/common.o

.PHONY: all deps check test check-clients check-pod unit integration layers demo bench install clean stress fuzz fuzz-bins \
        test-bins headers FORCE
# What a developer builds after each edit: txbox, the library and the test variant the
# integration tests run.  The unit test programs and the fuzz replays (test-bins) are ~40
# static links that a change anywhere in the library redoes, about 3 s of the 5 s that a
# rebuild after touching a base header may take (issue 35, docs/BENCHMARKS.md); the targets
# that run them (unit, test, check, fuzz) build them, and tests/run.sh refuses a program
# missing or older than what it is linked from.
all: $(BUILD)/txbox $(BUILD)/libtxbox.a $(BUILD)/testing/txbox
test-bins: $(UNIT_BIN) $(REPLAY_BIN)

$(BUILD)/testing/%.o: %.c Makefile
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DTXBOX_TESTING $(DEPFLAGS) -c -o $@ $<

$(BUILD)/%.o: %.c Makefile
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(DEPFLAGS) -c -o $@ $<

# The generator links the loader and the layers below it (base, store, sandbox, policy:
# scripts/layers.sh --objects checks that policy/ uses nothing above); under a sanitizer it
# runs with leak checks off (libfyaml's own leak, see tests/fuzz/fuzz_policy.c).
GEN_DEPS := $(filter $(foreach l,base store sandbox policy,$(BUILD)/src/lib/$(l)/%),$(LIB_OBJ))
$(BUILD)/gen/policygen: scripts/policygen.c $(GEN_DEPS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(DEPFLAGS) $(LDFLAGS) -o $@ $(filter %.c %.o,$^) $(LDLIBS)

# A change to the loader's code relinks and reruns the generator, but builtin_policy.c is
# only replaced when what it writes differs: the stamp records the run, and the library's
# archives and programs are not redone for an identical file.  (A missing .c reruns it.)
$(BUILD)/gen/builtin_policy.c: $(BUILD)/gen/builtin_policy.stamp ;
$(BUILD)/gen/builtin_policy.stamp: src/lib/policy/default.yml $(BUILD)/gen/policygen \
                $(if $(wildcard $(BUILD)/gen/builtin_policy.c),,FORCE)
	ASAN_OPTIONS=detect_leaks=0 $(BUILD)/gen/policygen $< >$(@:.stamp=.c).tmp
	@if cmp -s $(@:.stamp=.c).tmp $(@:.stamp=.c); then rm $(@:.stamp=.c).tmp; \
	else mv $(@:.stamp=.c).tmp $(@:.stamp=.c); fi
	@touch $@

$(BUILD)/gen/%.o: $(BUILD)/gen/%.c Makefile
	$(CC) $(CFLAGS) $(DEPFLAGS) -c -o $@ $<

# Two archives of the same objects.  libtxbox.a is the library for programs that embed txbox
# (include/txbox.h): linked into one object whose every symbol but the API's (TXBOX_API,
# default visibility; all else is compiled -fvisibility=hidden) is made local, so that it
# exports only txbox_ names and cannot clash with an embedder's own xmalloc or json_ helpers
# (tests/lint/t_symbols.sh).  libtxbox-int.a keeps the internal names global: the CLI, the
# fuzz targets, the corpus driver and the benchmarks are built from the parts, not through
# the API.
$(BUILD)/libtxbox.a: $(LIB_OBJ)
	@rm -f $@ $(BUILD)/libtxbox.o
	$(LD) -r -o $(BUILD)/libtxbox.o $^
	$(OBJCOPY) --localize-hidden $(BUILD)/libtxbox.o
	ar rcs $@ $(BUILD)/libtxbox.o

$(BUILD)/libtxbox-int.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/testing/libtxbox.a: $(TEST_LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/txbox: $(CLI_OBJ) $(BUILD)/libtxbox-int.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/testing/txbox: $(TEST_CLI_OBJ) $(BUILD)/testing/libtxbox.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# Unit tests link the test variant: some drive failpoints through the library.  Compiled and
# linked in two steps, as are the replay binaries below: a change in the library relinks
# every test, and compiles none of them again.
$(BUILD)/tests/obj/%.o: tests/unit/%.c Makefile
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DTXBOX_TESTING $(DEPFLAGS) -c -o $@ $<

$(BUILD)/tests/%: $(BUILD)/tests/obj/%.o $(BUILD)/testing/libtxbox.a
	$(CC) $(LDFLAGS) -o $@ $(filter %.o %.a,$^) $(LDLIBS)

$(BUILD)/fuzz/obj/%.o: tests/fuzz/%.c Makefile
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(DEPFLAGS) -Itests/fuzz -Isrc/cli -c -o $@ $<

# The objects above are intermediate to make: kept, or every build would compile them again.
.SECONDARY: $(UNIT_BIN:$(BUILD)/tests/%=$(BUILD)/tests/obj/%.o) \
            $(FUZZ_TARGETS:%=$(BUILD)/fuzz/obj/fuzz_%.o) $(BUILD)/fuzz/obj/replay.o

.SECONDEXPANSION:
$(BUILD)/fuzz/replay_%: $(BUILD)/fuzz/obj/fuzz_%.o $(BUILD)/fuzz/obj/replay.o $$(FUZZ_EXTRA_$$*) $(BUILD)/libtxbox-int.a
	$(CC) $(LDFLAGS) -o $@ $(filter %.o %.a,$^) $(LDLIBS)

$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $$(FUZZ_EXTRA_$$*) $(BUILD)/libtxbox-int.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(DEPFLAGS) -fsanitize=fuzzer -Itests/fuzz -Isrc/cli $(LDFLAGS) -o $@ tests/fuzz/fuzz_$*.c \
		$(FUZZ_EXTRA_$*) $(BUILD)/libtxbox-int.a $(LDLIBS)

fuzz-bins: $(FUZZ_TARGETS:%=$(BUILD)/fuzz/fuzz_%)

FORCE:

# Each header compiles on its own, with nothing included before it: it includes (or declares)
# what it uses, so that a file includes only the headers it uses itself, and touching a header
# rebuilds only the files that use it (tests/lint/t_headers.sh runs this).  Alone, nothing
# calls a header's static helpers: clang would call them unused.
HEADERS := include/txbox.h $(wildcard src/lib/*/*.h src/cli/*.h tests/unit/*.h tests/fuzz/*.h)
headers:
	@fail=0; for h in $(HEADERS); do \
		echo "#include \"$$h\"" | $(CC) $(CFLAGS) -Wno-unused-function -I. -fsyntax-only -x c - || \
			{ echo "headers: $$h does not compile on its own"; fail=1; }; \
	done; exit $$fail

deps:
	@scripts/deps.sh

check:
	@scripts/deps.sh --test
	$(MAKE) test

# make check without scripts/deps.sh: installs nothing (the packages must be there already).
test:
	scripts/layers.sh
	$(MAKE) all test-bins
	BUILD=$(BUILD) tests/run.sh

# The real agents (Claude Code, Codex, Gemini CLI, the MCP inspector and SDK) from npm at
# pinned versions, each against a scripted model server in the test jail (tests/clients/).
check-clients: $(BUILD)/testing/txbox
	BUILD=$(BUILD) tests/clients/run.sh

# The layers of the code (scripts/layers.sh): every include, and every symbol an object of
# $(BUILD) refers to once it is built, uses only its own layer and the ones below.  A second.
# Inside the policy engine, its files call one another in no circle outside the shell
# parser's own (scripts/policy_graph.sh, on the objects).
layers:
	scripts/layers.sh
	@if [ -d $(BUILD)/src/lib ]; then echo "scripts/layers.sh --objects $(BUILD)"; \
		scripts/layers.sh --objects $(BUILD); \
		echo "scripts/policy_graph.sh --objects $(BUILD)"; \
		scripts/policy_graph.sh --objects $(BUILD); fi

unit: all test-bins
	BUILD=$(BUILD) tests/run.sh unit

integration: all
	BUILD=$(BUILD) tests/run.sh integration

demo: deps
	$(MAKE) $(BUILD)/txbox
	BUILD=$(BUILD) scripts/demo.sh

# Benchmarks (bench/run.sh): markdown on stdout and a PNG plot (BENCH_PLOT_OUT=docs/benchmarks.png
# to write it there); BENCH_QUICK=1 for a smoke run, BENCH_N for more runs.
bench:
	@scripts/deps.sh --bench
	$(MAKE) all
	BUILD=$(BUILD) bench/run.sh

stress: all
	BUILD=$(BUILD) TXBOX_STRESS=1 tests/run.sh integration

# deploy/ (tests/pod/run.sh): strict validation against the pinned upstream schemas, the
# generated seccomp profiles, the AppArmor profile; then, with podman and root, the pods run
# with options generated from the manifests (skipped, saying why, where podman cannot run).
check-pod: $(BUILD)/txbox
	@scripts/deps.sh --pod
	BUILD=$(BUILD) tests/pod/run.sh

# Fuzzing (tests/fuzz/run.sh): each libFuzzer target (clang, ASan, UBSan) for FUZZ_SECONDS,
# then the JSON-RPC mutation test with TXBOX_FUZZ_N messages.  make check replays the
# targets' corpora and crashers, and runs the mutation test with 20,000 messages.
FUZZ_SECONDS ?= 60
fuzz: all test-bins
	@scripts/deps.sh --fuzz
	$(MAKE) FUZZ=1 fuzz-bins
	FUZZ_BUILD=build-fuzz FUZZ_SECONDS=$(FUZZ_SECONDS) tests/fuzz/run.sh
	TXBOX_FUZZ_N=$${TXBOX_FUZZ_N:-200000} $(BUILD)/tests/test_mcp

# The command, its man page and completion; not include/txbox.h, the library's internal API
# (no shared library is built, and its structs carry no version or size: no ABI to promise).
install: $(BUILD)/txbox
	install -D -m 0755 $(BUILD)/txbox $(DESTDIR)$(PREFIX)/bin/txbox
	ln -sf txbox $(DESTDIR)$(PREFIX)/bin/txbox-prefix
	install -D -m 0644 docs/txbox.1 $(DESTDIR)$(PREFIX)/share/man/man1/txbox.1
	install -D -m 0644 completions/txbox.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/txbox

clean:
	rm -rf build build-san build-fuzz build-clang

-include $(wildcard $(BUILD)/src/lib/*/*.o.d $(BUILD)/src/cli/*.o.d $(BUILD)/tests/obj/*.d $(BUILD)/fuzz/*.d \
        $(BUILD)/fuzz/obj/*.d $(BUILD)/gen/*.d $(BUILD)/testing/src/lib/*/*.o.d $(BUILD)/testing/src/cli/*.o.d)
