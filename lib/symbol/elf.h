/*
 * elf.h — look up ELF virtual addresses in files on this machine (elfutils libdwfl).
 *
 * Internal to libtracekit: the ELF naming pass (elf_name.c, tk_elf_name_profile) uses it to name
 * the frames a Linux monitor recorded.
 * Each file is opened once and kept (with its DWARF, if any) until the cache is freed. Separate
 * debug files are found the standard way (.gnu_debuglink, /usr/lib/debug/.build-id/xx/yyyy.debug).
 */
#ifndef TK_SYMBOL_ELF_H
#define TK_SYMBOL_ELF_H

#include <stdint.h>

#include "tracekit/error.h"

typedef struct tk_elf_cache tk_elf_cache;

typedef struct tk_elf_loc {
	const char *func; /* symbol (.symtab, else .dynsym), as written (not demangled); NULL if none covers addr */
	uint64_t offset;  /* addr − the symbol's start */
	const char *file; /* source file from DWARF line info; NULL if none */
	uint32_t line;    /* 0 if unknown */
	int inlined;      /* a function inlined into the next entry (tk_elf_lookup_frames) */
} tk_elf_loc;

tk_elf_cache *tk_elf_cache_new(void);
void tk_elf_cache_free(tk_elf_cache *c);

/* Open (or find in the cache) the ELF file at path. If build_id (lower-case hex) is non-empty,
 * the file's GNU build-id must match it: a rebuilt binary would otherwise give confidently wrong
 * names. Returns 0, or -1 with err naming the file and the reason; a failure is cached too, so
 * asking again is cheap and gives the same error. */
int tk_elf_open(tk_elf_cache *c, const char *path, const char *build_id, tk_error *err);

/* Look up an ELF virtual address (runtime address − load bias) in a file opened with
 * tk_elf_open. Returns 1 and fills out when a symbol or line covers addr, 0 when nothing does,
 * -1 when the file could not be opened (err set). Strings in out live as long as the cache. */
int tk_elf_lookup(tk_elf_cache *c, const char *path, uint64_t addr, tk_elf_loc *out, tk_error *err);

/* Like tk_elf_lookup, with the inlined calls DWARF records at addr expanded: out[0] is the
 * innermost inlined function (file:line from the line table), each following entry the function
 * it was inlined into, at the call site's file:line, and the last one the real function (its name
 * from the symbol table). Returns the number of entries (at most cap, cap >= 1), 0 when nothing
 * covers addr, -1 when the file could not be opened. */
int tk_elf_lookup_frames(tk_elf_cache *c, const char *path, uint64_t addr, tk_elf_loc *out, size_t cap, tk_error *err);

#endif
