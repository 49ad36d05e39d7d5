# The test suite: how `make check` builds and runs it, and `make fuzz`.
#
# `make check` builds build/san with CHECK_JOBS parallel jobs (default: the number of CPUs) and
# tests/run.sh runs the tests TK_JOBS at a time (same default); TK_JOBS=1 runs them one by one.
CHECK_JOBS ?= $(shell nproc 2>/dev/null || echo 2)

# `make fuzz`: every libFuzzer target for FUZZ_TIME seconds each (time-budgeted, new inputs kept
# under $(BUILD)/fuzz*/; a find there is a bug to fix and a seed to add to tests/fuzz/corpus/).
# `make check` runs each target for a fixed number of inputs instead (-runs=N, -seed=1, seeded from
# tests/fuzz/corpus), so its result and its time do not depend on the machine's load.
FUZZ_TIME ?= 600
.PHONY: fuzz fuzz-symbol
fuzz: fuzz-read fuzz-readers fuzz-metrickit fuzz-records fuzz-reports fuzz-stats fuzz-bundle fuzz-alert fuzz-symbol

fuzz-symbol: $(BUILD)/fuzz/fuzz_symbol_macho $(BUILD)/fuzz/fuzz_symbol_cache $(BUILD)/fuzz/fuzz_swift_demangle \
             $(BUILD)/fuzz/fuzz_symbolicate_v5 $(BUILD)/tracekit
	mkdir -p $(BUILD)/fuzz/new-macho $(BUILD)/fuzz/new-symcache $(BUILD)/fuzz/new-swift $(BUILD)/fuzz/new-v5
	cp -n tests/fixtures/symbol/libtks-arm64.dylib.dwarf tests/fixtures/symbol/dwarf5-arm64.o $(BUILD)/fuzz/new-macho/
	$(BUILD)/tracekit symcache build tests/fixtures/symbol/libtks-arm64.dylib.dwarf -o $(BUILD)/fuzz/new-symcache >/dev/null
	$(BUILD)/fuzz/fuzz_symbol_macho -max_total_time=$(FUZZ_TIME) -rss_limit_mb=1024 $(BUILD)/fuzz/new-macho
	$(BUILD)/fuzz/fuzz_symbol_cache -max_total_time=$(FUZZ_TIME) -rss_limit_mb=1024 $(BUILD)/fuzz/new-symcache
	sed -n 's/^\([^ ]*\) ---> .*/\1/p' tests/fixtures/swift-demangle/*.txt | sort -u | split -l 1 - $(BUILD)/fuzz/new-swift/v
	$(BUILD)/fuzz/fuzz_swift_demangle -max_total_time=$(FUZZ_TIME) -max_len=512 $(BUILD)/fuzz/new-swift
	TK_FUZZ_DSYM=tests/fixtures/symbol/libtks-arm64.dylib.dwarf $(BUILD)/fuzz/fuzz_symbolicate_v5 \
	  -max_total_time=$(FUZZ_TIME) -rss_limit_mb=1024 -max_len=4096 $(BUILD)/fuzz/new-v5 tests/fuzz/corpus/symbolicate_v5

# Fuzzer objects: every libFuzzer target links the library sources it exercises, compiled once
# here for all of them (ASan+UBSan, fuzzer coverage, no recovery) rather than once per target; the
# harness (tests/fuzz/*.c) is compiled in the target's own link command, with its own -D options.
# $(call fuzzobj,SOURCES) (defined in the Makefile, before the fragments): the objects of SOURCES'
# lib/*.c files.
FUZZ_OBJ_FLAGS := $(STD) -g -O1 -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all \
                  -Iinclude -Ilib -I/usr/include/libxml2 -I/usr/include/libdwarf
$(BUILD)/fuzzobj/%.o: %.c
	@mkdir -p $(dir $@)
	clang $(FUZZ_OBJ_FLAGS) -MMD -MP -c $< -o $@
-include $(shell find $(BUILD)/fuzzobj -name '*.d' 2>/dev/null)

# tk_batch (tests/tools/tk_batch.c): many tracekit command lines in one process, through tracekit's
# own main() (cli/main.c compiled once more with main renamed) and the same cli/ objects, for tests
# that ask hundreds of questions (under ASan a process costs ~0.2 s of CPU before it starts).
TK_BATCH_CLI_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(filter-out cli/main.c,$(sort $(wildcard cli/*.c))))
$(BUILD)/obj/tests/tk_batch_main.o: cli/main.c $(BUILD)/gen/commands.inc
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_TK) -I$(BUILD)/gen $(CFLAGS_TK) -Dmain=tk_batch_tracekit_main -MMD -MP -c $< -o $@
# `tk_batch --serve SOCKET` is also the fork server that tests/tools/tk_exec.c (built plain: test
# plumbing like the shell) hands command lines to (tests/lib.sh: tk_fork_start), one forked child each.
$(BUILD)/tests/tools/tk_batch: tests/tools/tk_batch.c tests/tools/tk_forkserver.c tests/tools/tk_fork.h $(BUILD)/obj/tests/tk_batch_main.o $(TK_BATCH_CLI_OBJ) $(BUILD)/libtracekit-store.a $(BUILD)/libtracekit.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_TK) $(CFLAGS_TK) $(LDFLAGS_TK) $(EXE_LDFLAGS) -o $@ $< tests/tools/tk_forkserver.c $(BUILD)/obj/tests/tk_batch_main.o $(TK_BATCH_CLI_OBJ) \
	  $(BUILD)/libtracekit-store.a $(BUILD)/libtracekit.a $(STORE_LDLIBS) $(CLI_LDLIBS) $(LIB_LDLIBS)
$(BUILD)/tests/tools/tk_exec: tests/tools/tk_exec.c tests/tools/tk_fork.h
	@mkdir -p $(dir $@)
	$(CC) $(STD) $(WARN) -O1 -o $@ $<
EXTRA_TEST_DEPS += $(BUILD)/tests/tools/tk_batch $(BUILD)/tests/tools/tk_exec
