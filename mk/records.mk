# Records reader (lib/read/records.c), ELF symbolization (lib/symbol/elf.c), `tracekit records`
# and `tracekit monitor`.
LIB_LDLIBS += -ljansson -lelf -lbz2 -llzma -lz
DEPS_PKGS  += libjansson-dev libdw-dev libelf-dev libbz2-dev liblzma-dev zlib1g-dev binutils

# lib/symbol/elf.c uses elfutils' libdwfl. libdw exports 34 dwarf_* names that libdwarf (used by
# the Mach-O/dSYM symbolicator) exports too, with other signatures, and both libraries call those
# names through their PLT: linked side by side, one would silently run the other's functions. So
# elf.o is libdw.a + libelf.a linked into it privately (ld -r), with every global except tk_elf_*
# made local: nothing of libdw is visible outside, and libdwarf keeps its own dwarf_* intact.
LIBDW_A  ?= $(shell $(CC) -print-file-name=libdw.a)
LIBELF_A ?= $(shell $(CC) -print-file-name=libelf.a)
$(BUILD)/obj/lib/symbol/elf.o: lib/symbol/elf.c mk/records.mk
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_TK) $(CFLAGS_TK) -MMD -MP -MT $@ -MF $(@:.o=.d) -c $< -o $(@:.o=.pre.o)
	ld -r -o $(@:.o=.all.o) $(@:.o=.pre.o) $(LIBDW_A) $(LIBELF_A)
	objcopy -w --keep-global-symbol='tk_elf_*' $(@:.o=.all.o) $@
	rm -f $(@:.o=.pre.o) $(@:.o=.all.o)


# libFuzzer harness over the Records reader (clang; always ASan+UBSan+fuzzer, whatever BUILD is).
# `make fuzz-records` fuzzes for FUZZ_TIME seconds; make check runs a short seeded pass
# (tests/cli/records_fuzz.sh). TK_RECORDS_TREE_DIFF: every proportion tree also goes through the
# jansson check, and the fast tree check must agree with it (abort otherwise).
FUZZ_RECORDS_SRC := tests/fuzz/fuzz_records.c lib/read/records.c lib/model/profile.c lib/read/input.c \
                    $(wildcard lib/util/*.c)
# (records.c is compiled here, with TK_RECORDS_TREE_DIFF; the rest are the shared fuzzer objects)
$(BUILD)/fuzz_records: $(FUZZ_RECORDS_SRC) $(call fuzzobj,$(filter-out lib/read/records.c,$(FUZZ_RECORDS_SRC))) $(wildcard include/tracekit/*.h lib/util/*.h lib/symbol/*.h)
	@mkdir -p $(dir $@)
	clang $(STD) -Iinclude -Ilib -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	  -DTK_RECORDS_TREE_DIFF -o $@ tests/fuzz/fuzz_records.c lib/read/records.c \
	  $(call fuzzobj,$(filter-out lib/read/records.c,$(FUZZ_RECORDS_SRC))) -ljansson -lz -lm
EXTRA_TEST_DEPS += $(BUILD)/fuzz_records
FUZZ_TIME ?= 60
.PHONY: fuzz-records
fuzz-records: $(BUILD)/fuzz_records
	mkdir -p $(BUILD)/fuzz-corpus && cp -n tests/fuzz/corpus/records/* $(BUILD)/fuzz-corpus/
	$(BUILD)/fuzz_records -max_total_time=$(FUZZ_TIME) -max_len=4096 $(BUILD)/fuzz-corpus
