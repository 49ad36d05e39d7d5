# Symbolication (lib/symbol, cli/atos.c, cli/symcache.c, cli/symbolicate.c): libdwarf for DWARF,
# libiberty for C++ demangling; clang/lld/llvm build the test dylibs and dSYMs and provide the
# llvm-symbolizer oracle.
#
# libdwarf and elfutils' libdw (used by lib/symbol/elf.c) both define dwarf_* functions with
# different signatures, and a process can bind each name only once. So we link a private copy of
# Debian's static libdwarf.a whose symbols are renamed tkdw_*, and compile lib/symbol/dwarf.c with
# a generated header that maps the libdwarf names we call to the renamed ones. libdw keeps the
# plain dwarf_* names; link order no longer matters.
LIBDWARF_A   := $(shell $(CC) -print-file-name=libdwarf.a 2>/dev/null)
TKDW_MAP     := $(BUILD)/gen/tkdw.map
TKDW_H       := $(BUILD)/gen/tkdw.h
TKDW_A       := $(BUILD)/libtkdwarf.a
LIB_LDLIBS   += $(TKDW_A) -lelf -lz -liberty
DEPS_PKGS    += libdwarf-dev libelf-dev zlib1g-dev libiberty-dev binutils clang lld llvm libclang-rt-14-dev time
CPPFLAGS_TK  += -I/usr/include/libdwarf

$(TKDW_MAP):
	@mkdir -p $(dir $@)
	nm -g --defined-only $(LIBDWARF_A) | awk 'NF == 3 { print $$3 " tkdw_" $$3 }' | sort -u >$@.tmp && mv $@.tmp $@
$(TKDW_H): $(TKDW_MAP)
	awk '{ print "#define " $$1 " " $$2 }' $< >$@.tmp && mv $@.tmp $@
$(TKDW_A): $(TKDW_MAP)
	objcopy --redefine-syms=$< $(LIBDWARF_A) $@
$(BUILD)/obj/lib/symbol/dwarf.o: $(TKDW_H)
$(BUILD)/obj/lib/symbol/dwarf.o: CPPFLAGS_TK += -include $(TKDW_H)
# Everything that links libtracekit.a links $(TKDW_A) too (order-only: not an archive member).
$(BUILD)/libtracekit.a: | $(TKDW_A)

# mk fragments are read before the Makefile's `all` rule: keep `all` the default goal.
.DEFAULT_GOAL := all

# libFuzzer harnesses for the Mach-O and symbol-cache readers, built with clang (libclang-rt-14-dev)
# straight from the sources they exercise; tests/cli/symbol_fuzz.sh gives each a bounded run.
SYMBOL_FUZZ_SRC := lib/symbol/macho.c lib/symbol/dwarf.c lib/symbol/symcache.c lib/symbol/demangle.c \
                   lib/util/error.c lib/util/hidx.c lib/util/mem.c
SYMBOL_FUZZ_CC  := clang -std=c17 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined \
                   -Iinclude -Ilib -I/usr/include/libdwarf -include $(TKDW_H)
$(BUILD)/fuzz/fuzz_symbol_macho: tests/fuzz/fuzz_symbol_macho.c $(SYMBOL_FUZZ_SRC) lib/symbol/symint.h $(TKDW_H) $(TKDW_A)
	@mkdir -p $(dir $@)
	$(SYMBOL_FUZZ_CC) -o $@ $< $(SYMBOL_FUZZ_SRC) $(TKDW_A) -lelf -lz -liberty -lm
$(BUILD)/fuzz/fuzz_symbol_cache: tests/fuzz/fuzz_symbol_cache.c $(SYMBOL_FUZZ_SRC) lib/symbol/symint.h $(TKDW_H) $(TKDW_A)
	@mkdir -p $(dir $@)
	$(SYMBOL_FUZZ_CC) -o $@ $< $(SYMBOL_FUZZ_SRC) $(TKDW_A) -lelf -lz -liberty -lm
EXTRA_TEST_DEPS += $(BUILD)/fuzz/fuzz_symbol_macho $(BUILD)/fuzz/fuzz_symbol_cache
