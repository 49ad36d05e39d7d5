# Readers (lib/read): xctrace XML via libxml2 (reference tokenizer) and zlib for gzip'd input.
DEPS_PKGS += libxml2-dev zlib1g-dev

# `make read-speed FILE=big.xml`: tokenizer and reader throughput (a measuring tool, not a test).
$(BUILD)/read-speed: tests/fuzz/xml_speed.c $(BUILD)/libtracekit.a
	$(CC) $(CPPFLAGS_TK) $(CFLAGS_TK) -o $@ $< $(BUILD)/libtracekit.a $(LIB_LDLIBS)
.PHONY: read-speed
read-speed: $(BUILD)/read-speed
	@for m in fast libxml2 model model-libxml2; do $(BUILD)/read-speed $(FILE) $$m; done

# ---- fuzzing (clang + libFuzzer) ----
# Two targets: fuzz_xctrace (the whole reader) and fuzz_xml_diff (fast tokenizer vs libxml2).
# `make check` runs both for a bounded time through tests/cli/read_fuzz.sh; `make fuzz-read
# FUZZ_TIME=600` runs longer. They are built from the reader, model and util sources only.
DEPS_PKGS += clang libclang-rt-14-dev
FUZZ_CC    ?= clang
FUZZ_FLAGS := -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -std=c17 -D_GNU_SOURCE \
              -Iinclude -Ilib -I/usr/include/libxml2
# Listed by file (not lib/read/*.c) so that other readers' dependencies do not leak in; the
# harnesses call tk_reader_xctrace directly rather than through the registry.
FUZZ_SRC    = lib/read/input.c lib/read/xctrace.c lib/read/kdebug.c lib/read/toc.c lib/read/xml.c lib/read/xml_fast.c \
              lib/read/xml_libxml2.c lib/model/profile.c $(wildcard lib/util/*.c)
FUZZ_TIME  ?= 600

$(BUILD)/fuzz/%: tests/fuzz/%.c $(call fuzzobj,$(FUZZ_SRC)) $(wildcard lib/read/*.h include/tracekit/*.h)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $< $(call fuzzobj,$(FUZZ_SRC)) -lxml2 -lz -lm

EXTRA_TEST_DEPS += $(BUILD)/fuzz/fuzz_xctrace $(BUILD)/fuzz/fuzz_xml_diff

.PHONY: fuzz-read
fuzz-read: $(BUILD)/fuzz/fuzz_xctrace $(BUILD)/fuzz/fuzz_xml_diff
	mkdir -p $(BUILD)/fuzz/new-xctrace $(BUILD)/fuzz/new-diff
	$(BUILD)/fuzz/fuzz_xctrace -max_total_time=$(FUZZ_TIME) -dict=tests/fuzz/xml.dict $(BUILD)/fuzz/new-xctrace tests/fuzz/corpus/xctrace
	$(BUILD)/fuzz/fuzz_xml_diff -max_total_time=$(FUZZ_TIME) -dict=tests/fuzz/xml.dict $(BUILD)/fuzz/new-diff tests/fuzz/corpus/xctrace
