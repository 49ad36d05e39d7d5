# Symbolication (lib/symbol, cli/atos.c, cli/symcache.c): libdwarf for DWARF, libiberty for C++
# demangling; clang/lld/llvm build the test dylibs and dSYMs and provide the llvm-symbolizer oracle.
# libdwarf and elfutils' libdw both define dwarf_*; libdw is kept private inside elf.o
# (see mk/records.mk), and libdwarf goes first so nothing else can bind our calls.
LIB_LDLIBS := -ldwarf -liberty $(LIB_LDLIBS)
DEPS_PKGS  += libdwarf-dev libiberty-dev clang lld llvm libclang-rt-14-dev time bc
CPPFLAGS_TK += -I/usr/include/libdwarf


# libFuzzer harnesses for the Mach-O and symbol-cache readers, built with clang (libclang-rt-14-dev)
# straight from the sources they exercise; tests/cli/symbol_fuzz.sh gives each a bounded run.
SYMBOL_FUZZ_SRC := lib/symbol/macho.c lib/symbol/dwarf.c lib/symbol/symcache.c lib/symbol/demangle.c \
                   lib/symbol/demangle_swift.c lib/symbol/demangle_swift_old.c lib/symbol/swift_print.c \
                   lib/util/error.c lib/util/hidx.c lib/util/mem.c lib/util/text.c
SYMBOL_FUZZ_CC  := clang -std=c17 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined \
                   -Iinclude -Ilib -I/usr/include/libdwarf
$(BUILD)/fuzz/fuzz_symbol_macho: tests/fuzz/fuzz_symbol_macho.c $(call fuzzobj,$(SYMBOL_FUZZ_SRC)) lib/symbol/symint.h
	@mkdir -p $(dir $@)
	$(SYMBOL_FUZZ_CC) -o $@ $< $(call fuzzobj,$(SYMBOL_FUZZ_SRC)) -ldwarf -liberty -lm
$(BUILD)/fuzz/fuzz_symbol_cache: tests/fuzz/fuzz_symbol_cache.c $(call fuzzobj,$(SYMBOL_FUZZ_SRC)) lib/symbol/symint.h
	@mkdir -p $(dir $@)
	$(SYMBOL_FUZZ_CC) -o $@ $< $(call fuzzobj,$(SYMBOL_FUZZ_SRC)) -ldwarf -liberty -lm
EXTRA_TEST_DEPS += $(BUILD)/fuzz/fuzz_symbol_macho $(BUILD)/fuzz/fuzz_symbol_cache

# libFuzzer harness for the Firefox Profiler symbolication API (lib/symbol/symbolicate_v5.c), over the
# symbolicator and the generated dSYM; tests/cli/symbol_fuzz.sh gives it a bounded run.
V5_FUZZ_SRC := $(SYMBOL_FUZZ_SRC) lib/symbol/symbolicate.c lib/symbol/symbolicate_v5.c
$(BUILD)/fuzz/fuzz_symbolicate_v5: tests/fuzz/fuzz_symbolicate_v5.c $(call fuzzobj,$(V5_FUZZ_SRC)) lib/symbol/symint.h include/tracekit/symbol.h
	@mkdir -p $(dir $@)
	$(SYMBOL_FUZZ_CC) -fno-sanitize-recover=all -o $@ $< $(call fuzzobj,$(V5_FUZZ_SRC)) -ldwarf -liberty -ljansson -lm
EXTRA_TEST_DEPS += $(BUILD)/fuzz/fuzz_symbolicate_v5

# libFuzzer harness for the Swift demangler; tests/cli/swift_fuzz.sh gives it a bounded run seeded
# with the test vectors.
SWIFT_FUZZ_SRC := lib/symbol/demangle_swift.c lib/symbol/demangle_swift_old.c lib/symbol/swift_print.c
$(BUILD)/fuzz/fuzz_swift_demangle: tests/fuzz/fuzz_swift_demangle.c $(call fuzzobj,$(SWIFT_FUZZ_SRC)) lib/symbol/swift_node.h
	@mkdir -p $(dir $@)
	$(SYMBOL_FUZZ_CC) -fno-sanitize-recover=all -o $@ $< $(call fuzzobj,$(SWIFT_FUZZ_SRC))
EXTRA_TEST_DEPS += $(BUILD)/fuzz/fuzz_swift_demangle

# bench/bench_demangle.sh: the Swift demangler's throughput, straight on the library.
$(BUILD)/demangle_speed: bench/demangle_speed.c $(BUILD)/libtracekit.a
	$(CC) $(CPPFLAGS_TK) $(CFLAGS_TK) -o $@ $< $(BUILD)/libtracekit.a $(LIB_LDLIBS)
