# MetricKit reader (lib/read/metrickit.c): its libFuzzer target, checked against jansson (the
# reference parser; libjansson-dev is in mk/records.mk's DEPS_PKGS). `make check` runs it briefly
# through tests/cli/metrickit_fuzz.sh; `make fuzz-metrickit FUZZ_TIME=600` runs longer.
FUZZ_MX_SRC := lib/read/metrickit.c lib/read/input.c lib/model/profile.c lib/stats/histogram.c $(wildcard lib/util/*.c)

$(BUILD)/fuzz/fuzz_metrickit: tests/fuzz/fuzz_metrickit.c $(call fuzzobj,$(FUZZ_MX_SRC)) $(wildcard lib/read/*.h include/tracekit/*.h)
	@mkdir -p $(dir $@)
	clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -std=c17 -D_GNU_SOURCE -Iinclude -Ilib \
	  -o $@ $< $(call fuzzobj,$(FUZZ_MX_SRC)) -ljansson -lz -lm

EXTRA_TEST_DEPS += $(BUILD)/fuzz/fuzz_metrickit

.PHONY: fuzz-metrickit
fuzz-metrickit: $(BUILD)/fuzz/fuzz_metrickit
	mkdir -p $(BUILD)/fuzz/new-metrickit
	$(BUILD)/fuzz/fuzz_metrickit -max_total_time=$(FUZZ_TIME) $(BUILD)/fuzz/new-metrickit tests/fuzz/corpus/metrickit

# bench/bench_metrickit.sh: the symbolication step alone, in process (derived vs in place)
$(BUILD)/bench/mx_symstep: bench/mx_symstep.c $(BUILD)/libtracekit.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_TK) $(CFLAGS_TK) -o $@ $< $(BUILD)/libtracekit.a $(LIB_LDLIBS)
