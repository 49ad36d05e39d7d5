# tracekit — top-level GNU Makefile.
#
#   make            build/tracekit, build/libtracekit.a, build/libtracekit-store.a, build/libtracekit-monitor.{a,so}
#   make check      install deps, build with ASan+UBSan, run every test (closing line: "N passed, N failed")
#   make bench      benchmarks side by side with the peers (see BENCHMARKS.md)
#   make demo       run the main job on the bundled example
#   make deps       install the Debian 12 packages the build and tests need (idempotent)
#
# Sources are found by wildcard, so a new reader, writer or subcommand is one new file.
# Each subsystem may add link flags, packages and targets in its own mk/*.mk fragment.

CC      ?= cc
ifeq ($(origin CC),default)
CC      := cc
endif
STD     := -std=c17 -D_GNU_SOURCE
WARN    := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wno-unused-parameter
OPT     ?= -O2 -g
SAN     ?=
BUILD   ?= build
CPPFLAGS_TK := -Iinclude -Ilib -I/usr/include/libxml2
CFLAGS_TK    = $(STD) $(WARN) $(OPT) $(SAN) -fPIC
LDFLAGS_TK   = $(SAN)

# Filled by mk/*.mk fragments.
LIB_LDLIBS   := -lxml2 -lz -lm
STORE_LDLIBS :=
CLI_LDLIBS   :=
MON_LDLIBS   := -lpthread -ldl
TEST_LDLIBS  := -lcmocka
DEPS_PKGS    := build-essential make pkg-config libxml2-dev zlib1g-dev libcmocka-dev python3 clang lld llvm

# `all` is the default goal even though the fragments below define rules of their own.
all:

# $(call fuzzobj,SOURCES): the shared libFuzzer objects of SOURCES' lib/*.c files (rule: mk/tests.mk)
fuzzobj = $(patsubst %.c,$(BUILD)/fuzzobj/%.o,$(filter lib/%.c,$(1)))

-include mk/*.mk

# The fleet store (lib/store) is a library of its own, so a program that links only the analysis
# library (readers, model, writers, symbols, stats) does not pull SQLite, curl, microhttpd or OpenSSL.
STORE_SRC := $(sort $(wildcard lib/store/*.c))
LIB_SRC  := $(filter-out $(STORE_SRC),$(sort $(shell find lib -name '*.c' 2>/dev/null)))
CLI_SRC  := $(sort $(wildcard cli/*.c))
MON_SRC  := $(sort $(wildcard monitor/*.c monitor/linux/*.c))
UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))

LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
STORE_OBJ := $(STORE_SRC:%.c=$(BUILD)/obj/%.o)
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/obj/%.o)
MON_OBJ  := $(MON_SRC:%.c=$(BUILD)/obj/%.o)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)

.PHONY: all check test bench demo deps clean fuzz format
all: $(BUILD)/tracekit $(BUILD)/libtracekit.a $(BUILD)/libtracekit-store.a $(BUILD)/libtracekit-monitor.a $(BUILD)/libtracekit-monitor.so $(EXTRA_ALL)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_TK) $(CFLAGS_TK) -MMD -MP -c $< -o $@

$(BUILD)/obj/monitor/%.o: monitor/%.c
	@mkdir -p $(dir $@)
	$(CC) -Iinclude $(CFLAGS_TK) -MMD -MP -c $< -o $@

$(BUILD)/libtracekit.a: $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/libtracekit-store.a: $(STORE_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/libtracekit-monitor.a: $(MON_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/libtracekit-monitor.so: $(MON_OBJ)
	$(CC) -shared $(LDFLAGS_TK) -o $@ $^ $(MON_LDLIBS)

# The command table is generated from the TK_COMMAND(...) lines in cli/*.c.
$(BUILD)/gen/commands.inc: $(CLI_SRC)
	@mkdir -p $(dir $@)
	grep -h '^TK_COMMAND(' $(CLI_SRC) | sort > $@.tmp && mv $@.tmp $@

$(BUILD)/obj/cli/main.o: $(BUILD)/gen/commands.inc
$(BUILD)/obj/cli/%.o: CPPFLAGS_TK += -I$(BUILD)/gen

# EXE_LDFLAGS: for the executables the tests start hundreds of times (make check: -static-libubsan,
# see there)
EXE_LDFLAGS ?=
$(BUILD)/tracekit: $(CLI_OBJ) $(BUILD)/libtracekit-store.a $(BUILD)/libtracekit.a
	$(CC) $(LDFLAGS_TK) $(EXE_LDFLAGS) -o $@ $(CLI_OBJ) $(BUILD)/libtracekit-store.a $(BUILD)/libtracekit.a $(STORE_LDLIBS) $(CLI_LDLIBS) $(LIB_LDLIBS)

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libtracekit-store.a $(BUILD)/libtracekit.a $(BUILD)/libtracekit-monitor.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_TK) -Itests $(CFLAGS_TK) -o $@ $< $(BUILD)/libtracekit-store.a $(BUILD)/libtracekit.a $(BUILD)/libtracekit-monitor.a $(TEST_LDLIBS) $(STORE_LDLIBS) $(LIB_LDLIBS) $(MON_LDLIBS)

# `make test` runs the suite against the current BUILD; `make check` is the full, sanitized run.
test: all $(UNIT_BIN) $(EXTRA_TEST_DEPS)
	BUILD=$(BUILD) ./tests/run.sh

# -g1: line tables and function names (sanitizer reports keep file:line and inlined frames), no
# variables or types: a quarter less compile time for the ~170 sanitized compilations.
# -static-libubsan for tracekit and tk_batch: the same UBSan checks and reports, but Debian's shared
# libubsan.so brings 6 MB of zeroed data that LeakSanitizer scans at every process's exit (~30 ms of
# the ~0.2 s a sanitized tracekit process costs before doing anything; the tests start thousands).
check: deps
	$(MAKE) --no-print-directory -j$(CHECK_JOBS) BUILD=build/san OPT="-O1 -g1" \
	  SAN="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" \
	  EXE_LDFLAGS=-static-libubsan test

bench: deps all
	./bench/run.sh

demo: deps
	@echo "make demo: building (quietly)…"
	@$(MAKE) -s --no-print-directory all
	@./examples/demo.sh

deps:
	@./scripts/deps.sh $(DEPS_PKGS)

format:
	clang-format -i $$(find include lib cli monitor tests bench -name '*.[ch]')

clean:
	rm -rf build

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
