# Symbolication (lib/symbol, cli/atos.c, cli/symcache.c): libdwarf for DWARF, libiberty for C++
# demangling; clang/lld/llvm build the test dylibs and dSYMs and provide the llvm-symbolizer oracle.
LIB_LDLIBS += -ldwarf -liberty
DEPS_PKGS  += libdwarf-dev libiberty-dev clang lld llvm libclang-rt-14-dev
CPPFLAGS_TK += -I/usr/include/libdwarf
