# Records reader (lib/read/records.c), ELF symbolization (lib/symbol/elf.c), `tracekit records`
# and `tracekit monitor`.
LIB_LDLIBS += -ljansson -ldw -lelf
DEPS_PKGS  += libjansson-dev libdw-dev libelf-dev elfutils

# mk fragments are read before the Makefile's `all` rule: keep `all` the default goal.
.DEFAULT_GOAL := all

# libFuzzer harness over the Records reader (clang; always ASan+UBSan+fuzzer, whatever BUILD is).
# `make fuzz-records` fuzzes for FUZZ_TIME seconds; make check runs a short seeded pass
# (tests/cli/records_fuzz.sh).
FUZZ_RECORDS_SRC := tests/fuzz/fuzz_records.c lib/read/records.c lib/symbol/elf.c lib/model/profile.c \
                    lib/read/input.c $(wildcard lib/util/*.c)
$(BUILD)/fuzz_records: $(FUZZ_RECORDS_SRC) $(wildcard include/tracekit/*.h lib/util/*.h lib/symbol/*.h)
	@mkdir -p $(dir $@)
	clang $(STD) -Iinclude -Ilib -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	  -o $@ $(FUZZ_RECORDS_SRC) -ljansson -ldw -lelf -lz -lm
EXTRA_TEST_DEPS += $(BUILD)/fuzz_records
FUZZ_TIME ?= 60
.PHONY: fuzz-records
fuzz-records: $(BUILD)/fuzz_records
	mkdir -p $(BUILD)/fuzz-corpus && cp -n tests/fuzz/corpus/records/* $(BUILD)/fuzz-corpus/
	$(BUILD)/fuzz_records -max_total_time=$(FUZZ_TIME) -max_len=4096 $(BUILD)/fuzz-corpus
