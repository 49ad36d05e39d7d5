# Records reader (lib/read/records.c), ELF symbolization (lib/symbol/elf.c), `tracekit records`
# and `tracekit monitor`.
LIB_LDLIBS += -ljansson -ldw -lelf
DEPS_PKGS  += libjansson-dev libdw-dev libelf-dev elfutils
