# Text readers (lib/read/deepcopy.c, sample.c, folded.c, perf.c and their line reader lines.c).
# perf (linux-perf) recorded the perf-script fixtures and makes the benchmark's input; python3 reads
# the fixtures' own numbers in tests/cli/text_oracle.py.
DEPS_PKGS += linux-perf python3 gzip

# ---- fuzzing: one libFuzzer target per text reader (clang, ASan+UBSan whatever BUILD is) ----
# `make check` runs each for a few seconds through tests/cli/readers_fuzz.sh; `make fuzz-readers
# FUZZ_TIME=600` runs longer. Each is the reader alone (called without its sniffer) plus the folded
# reader and writer for the round-trip check in tests/fuzz/fuzz_text.c.
TEXT_READERS     := deepcopy sample folded perf simpleperf dtrace
FUZZ_TEXT_FLAGS  := -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -std=c17 -D_GNU_SOURCE \
                    -Iinclude -Ilib
FUZZ_TEXT_COMMON := lib/read/input.c lib/read/lines.c lib/read/meta.c lib/read/folded.c lib/model/profile.c lib/model/calltree.c \
                    lib/write/folded.c lib/write/wutil.c $(wildcard lib/util/*.c)

# A static pattern: a plain fuzz_% rule would also capture read.mk's fuzz_xctrace.
$(TEXT_READERS:%=$(BUILD)/fuzz/fuzz_%): $(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_text.c $(BUILD)/fuzzobj/lib/read/%.o $(call fuzzobj,$(FUZZ_TEXT_COMMON)) $(wildcard lib/read/*.h include/tracekit/*.h)
	@mkdir -p $(dir $@)
	clang $(FUZZ_TEXT_FLAGS) -DTK_FUZZ_READER=tk_reader_$* -o $@ tests/fuzz/fuzz_text.c \
	  $(call fuzzobj,$(sort lib/read/$*.c $(FUZZ_TEXT_COMMON))) -lz -lm

EXTRA_TEST_DEPS += $(TEXT_READERS:%=$(BUILD)/fuzz/fuzz_%)

.PHONY: fuzz-readers
fuzz-readers: $(TEXT_READERS:%=$(BUILD)/fuzz/fuzz_%)
	for r in $(TEXT_READERS); do mkdir -p $(BUILD)/fuzz/new-$$r; \
	  $(BUILD)/fuzz/fuzz_$$r -max_total_time=$(FUZZ_TIME) $(BUILD)/fuzz/new-$$r tests/fuzz/corpus/$$r || exit 1; done
