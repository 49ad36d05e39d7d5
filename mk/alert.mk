# Alert rules (lib/store/alert.c, `tracekit alert`, docs/alerts.md).
# libFuzzer harness over the rules parser, with the store front (metrics, --by/--since parsing) it
# checks rules against (store.c brings the stack merging of stacks.c and the model with it); the
# backends are stubs in the harness. make check runs a short seeded pass
# (tests/cli/alert.sh); `make fuzz-alert` runs FUZZ_TIME seconds.
FUZZ_ALERT_SRC := tests/fuzz/fuzz_alert.c lib/store/alert.c lib/store/store.c lib/store/stacks.c lib/model/profile.c lib/stats/quantile.c $(wildcard lib/util/*.c)
$(BUILD)/fuzz_alert: $(filter-out lib/%,$(FUZZ_ALERT_SRC)) $(call fuzzobj,$(FUZZ_ALERT_SRC)) $(wildcard include/tracekit/*.h lib/util/*.h lib/store/*.h)
	@mkdir -p $(dir $@)
	clang $(STD) -Iinclude -Ilib -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	  -o $@ $(filter-out lib/%,$(FUZZ_ALERT_SRC)) $(call fuzzobj,$(FUZZ_ALERT_SRC)) -lcrypto -lm
EXTRA_TEST_DEPS += $(BUILD)/fuzz_alert
.PHONY: fuzz-alert
fuzz-alert: $(BUILD)/fuzz_alert
	mkdir -p $(BUILD)/fuzz-alert-corpus && cp -n tests/fuzz/corpus/alert/* $(BUILD)/fuzz-alert-corpus/
	$(BUILD)/fuzz_alert -max_total_time=$(FUZZ_TIME) -max_len=2048 $(BUILD)/fuzz-alert-corpus
