# Statistics across reports and runs (lib/stats/), `tracekit stats` and `tracekit diff`.
# The tests compare with python3's statistics module (type 7 = method='inclusive') and numpy;
# the benchmark runs numpy side by side.
DEPS_PKGS += python3 python3-numpy

# libFuzzer harness over the numbers reader and the sketch's text form (clang; always
# ASan+UBSan+fuzzer). `make fuzz-stats` fuzzes for FUZZ_TIME seconds; make check runs a short seeded
# pass (tests/cli/stats_fuzz.sh).
FUZZ_STATS_SRC := tests/fuzz/fuzz_stats.c lib/stats/quantile.c lib/stats/sketch.c lib/stats/values.c \
                  lib/stats/values_read.c lib/read/input.c $(wildcard lib/util/*.c)
$(BUILD)/fuzz_stats: $(filter-out lib/%,$(FUZZ_STATS_SRC)) $(call fuzzobj,$(FUZZ_STATS_SRC)) $(wildcard include/tracekit/*.h lib/util/*.h)
	@mkdir -p $(dir $@)
	clang $(STD) -Iinclude -Ilib -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	  -o $@ $(filter-out lib/%,$(FUZZ_STATS_SRC)) $(call fuzzobj,$(FUZZ_STATS_SRC)) -lz -lm
EXTRA_TEST_DEPS += $(BUILD)/fuzz_stats
.PHONY: fuzz-stats
fuzz-stats: $(BUILD)/fuzz_stats
	mkdir -p $(BUILD)/fuzz-corpus-stats && cp -n tests/fuzz/corpus/stats/* $(BUILD)/fuzz-corpus-stats/
	$(BUILD)/fuzz_stats -max_total_time=$(FUZZ_TIME) -max_len=4096 $(BUILD)/fuzz-corpus-stats
