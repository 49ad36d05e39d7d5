# Apple's reports (lib/read/apple_report.c, ips.c, crash.c, spindump.c; lib/write/report_*.c;
# lib/symbol/report_sym.c): jansson (mk/records.mk) parses .ips. One libFuzzer target per format,
# run briefly by tests/cli/reports_fuzz.sh; `make fuzz-reports FUZZ_TIME=600` runs longer.
REPORT_FORMATS  := ips crash spindump
REPORT_FUZZ_SRC := lib/read/apple_report.c lib/read/ips.c lib/read/crash.c lib/read/spindump.c lib/read/input.c \
                   lib/model/profile.c lib/write/report_crash.c lib/write/report_ips.c lib/write/report_spindump.c \
                   $(wildcard lib/util/*.c)
REPORT_FUZZ_CC  := clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -std=c17 \
                   -D_GNU_SOURCE -Iinclude -Ilib

$(REPORT_FORMATS:%=$(BUILD)/fuzz/fuzz_report_%): $(BUILD)/fuzz/fuzz_report_%: tests/fuzz/fuzz_apple_report.c $(call fuzzobj,$(REPORT_FUZZ_SRC)) $(wildcard lib/read/*.h include/tracekit/*.h)
	@mkdir -p $(dir $@)
	$(REPORT_FUZZ_CC) -DTK_FUZZ_FORMAT_$* -o $@ tests/fuzz/fuzz_apple_report.c $(call fuzzobj,$(REPORT_FUZZ_SRC)) -ljansson -lz -lm

EXTRA_TEST_DEPS += $(REPORT_FORMATS:%=$(BUILD)/fuzz/fuzz_report_%)

.PHONY: fuzz-reports
fuzz-reports: $(REPORT_FORMATS:%=$(BUILD)/fuzz/fuzz_report_%)
	for r in $(REPORT_FORMATS); do mkdir -p $(BUILD)/fuzz/new-report-$$r; \
	  $(BUILD)/fuzz/fuzz_report_$$r -max_total_time=$(FUZZ_TIME) $(BUILD)/fuzz/new-report-$$r \
	  tests/fuzz/corpus/report_$$r || exit 1; done
