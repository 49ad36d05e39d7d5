/*
 * symint.h — internals shared by the files of lib/symbol (Mach-O reader, DWARF collector, symbol
 * cache writer/reader, demangler, symbolicator). Not installed; the public API is
 * include/tracekit/symbol.h.
 */
#ifndef TK_SYMBOL_SYMINT_H
#define TK_SYMBOL_SYMINT_H

#include <stddef.h>
#include <stdint.h>

#include "tracekit/error.h"
#include "tracekit/symbol.h"

/* ---------------------------------------------------------------- Mach-O */

#define TK_MACHO_MAX_SLICES 16

typedef struct tk_macho_section {
	char segname[17], sectname[17];
	uint64_t addr, size;
	uint32_t offset; /* relative to the slice start */
	uint32_t index;  /* 1-based section number as nlist n_sect counts them */
} tk_macho_section;

typedef struct tk_macho_slice {
	uint32_t cputype, cpusubtype; /* cpusubtype with the capability bits masked */
	char arch[16];                /* "arm64", "arm64e", "x86_64", "x86_64h", "cpu…" */
	uint64_t offset, size;        /* of the slice inside the file */
	uint32_t filetype;
	int has_uuid;
	uint8_t uuid[16];
	uint64_t text_vmaddr, text_vmsize; /* __TEXT segment */
	uint32_t symoff, nsyms, stroff, strsize;
	tk_macho_section *sects; /* every section of every LC_SEGMENT_64 */
	uint32_t nsects;
	int has_dwarf; /* a __debug_info section with file contents */
} tk_macho_slice;

typedef struct tk_macho_file {
	int fat;
	uint32_t nslices;
	tk_macho_slice slices[TK_MACHO_MAX_SLICES];
} tk_macho_file;

/* Parse a thin or fat Mach-O held in data[0..size). name is used in messages. Only 64-bit
 * little-endian slices are accepted (every arm64/x86_64 image); 32-bit slices of a fat file are
 * listed with a "cpu…" arch and no contents. Returns 0 or -1 with err. */
int tk_macho_parse(const uint8_t *data, size_t size, const char *name, tk_macho_file *out, tk_error *err);
void tk_macho_free(tk_macho_file *f);
/* Non-zero if the bytes start like a Mach-O or fat file. */
int tk_macho_sniff(const uint8_t *data, size_t size);
/* The slice for arch (NULL = the only slice, or arm64/arm64e/x86_64 in that order of preference). */
const tk_macho_slice *tk_macho_pick(const tk_macho_file *f, const char *arch);
const char *tk_macho_arch_name(uint32_t cputype, uint32_t cpusubtype, char buf[16]);
/* Arch name → cputype/subtype; -1 if unknown. */
int tk_macho_arch_parse(const char *arch, uint32_t *cputype, uint32_t *cpusubtype);
void tk_uuid_format(const uint8_t uuid[16], char out[37]);
int tk_uuid_parse(const char *s, uint8_t uuid[16]); /* accepts dashes or not; -1 on bad input */
/* Add the caches of uuid found in the cache directory (<UUID>-<arch>.tksym, as the symbolicator names
 * them), so a cache built earlier serves after its dSYM is gone. Returns 1 if any was added. */
int tk_symbolicator_add_cached(tk_symbolicator *s, const uint8_t uuid[16]);
/* tk_symcache_warm for the lookups of file address addrs[i] in images im[i] that are mapped (a batch's
 * lookups, before tk_symbol_image_lookup answers each). */
void tk_symbol_images_warm(const tk_symbol_image *const *im, const uint64_t *addrs, size_t n);

/* ---------------------------------------------------------------- string pool used by builders */

typedef struct tk_strpool tk_strpool;
tk_strpool *tk_strpool_new(void);
void tk_strpool_free(tk_strpool *p);
uint32_t tk_strpool_add(tk_strpool *p, const char *s, size_t len); /* offset in the blob; "" is 0 */
const char *tk_strpool_data(const tk_strpool *p, size_t *len);

/* ---------------------------------------------------------------- symbol cache builder */

/* An inline-context record: one function of an inline chain and where it was called from. The
 * innermost frame takes its file:line from the range; frame i > 0 takes them from the call site of
 * frame i − 1. Records are shared by every range with the same context. */
typedef struct tk_sc_loc {
	uint32_t name;      /* string offset; 0 = unknown ("??") */
	uint32_t call_file; /* string offset of the call site's file (symbol-table records: ordinal) */
	uint32_t line;      /* low 28 bits: call line; high bits: TK_SC_LOC_* */
	uint32_t parent;    /* index of the caller's record; UINT32_MAX for the outermost frame */
} tk_sc_loc;

#define TK_SC_LINE_MASK 0x0fffffffu
#define TK_SC_LOC_SWIFT (1u << 28)  /* name is a Swift symbol */
#define TK_SC_LOC_SYMTAB (1u << 29) /* name from the symbol table, no debug info for the range */
#define TK_SC_NONE UINT32_MAX
/* set in tk_symbol_frame.flags by tk_symcache_lookup when the range has only a symbol-table name */
#define TK_SC_FRAME_SYMTAB 0x80000000u

/* Everything the DWARF/symtab collectors produce for one slice. */
typedef struct tk_sc_input {
	const char *image_name; /* basename of the binary, for "(in X)" */
	uint8_t uuid[16];
	uint32_t cputype, cpusubtype;
	uint64_t text_vmaddr;
	uint64_t src_size;
	int64_t src_mtime_ns;
	int has_dwarf;
} tk_sc_input;

/* Build the cache bytes for one slice of a Mach-O file mapped at data (the whole file). On
 * success *out is a malloc'd buffer of *out_size bytes in the format symcache.c reads. */
int tk_symcache_build_slice(const uint8_t *data, size_t size, const char *path, const tk_macho_slice *sl,
                            const tk_sc_input *in, uint8_t **out, size_t *out_size, tk_error *err);

/* A read-only view over cache bytes (mmap'ed or malloc'd). */
typedef struct tk_symcache tk_symcache;
/* Validate the bytes (header, bounds, checksum) and return a view. owned_map/owned_len: if
 * non-NULL the view unmaps (map) or frees (heap) them on close. */
tk_symcache *tk_symcache_view(const uint8_t *data, size_t size, const char *name, int how_owned, tk_error *err);
enum { TK_SC_BORROWED = 0, TK_SC_MMAP = 1, TK_SC_HEAP = 2, TK_SC_ARENA = 3 /* tk_symcache_open_owned_in */ };
void tk_symcache_close(tk_symcache *c);
/* Recompute and store the checksum of cache bytes (for writers and the fuzz harness). */
void tk_symcache_fix_checksum(uint8_t *data, size_t size);
tk_symcache *tk_symcache_open_file(const char *path, tk_error *err);
/* A file of the cache directory: refused when it is a symlink, not ours or writable by others. */
tk_symcache *tk_symcache_open_owned(const char *path, tk_error *err);
/* Where caches are read into memory on huge pages (symcache.c says why): one per symbolicator, freed
 * after every cache opened in it is closed. */
typedef struct tk_sc_arena tk_sc_arena;
tk_sc_arena *tk_sc_arena_new(void);
void tk_sc_arena_free(tk_sc_arena *a);
/* tk_symcache_open_owned, the bytes read into arena (up to 64 MB; a bigger cache is mapped). */
tk_symcache *tk_symcache_open_owned_in(const char *path, tk_sc_arena *arena, tk_error *err);
int tk_symcache_write_file(const char *path, const uint8_t *buf, size_t size, tk_error *err);
/* Lookup by file address (not runtime). Fills up to cap frames innermost first; returns count. */
size_t tk_symcache_lookup(const tk_symcache *c, uint64_t file_addr, tk_symbol_frame *out, size_t cap,
                          uint64_t *range_start);
/* Fetch into the processor's caches what looking up addrs[i] in cs[i] (i < n; cs[i] NULL: none) will
 * read, every lookup's steps taken together: the lookups that follow miss no more. Answers nothing. */
void tk_symcache_warm(const tk_symcache *const *cs, const uint64_t *addrs, size_t n);
void tk_symcache_info(const tk_symcache *c, tk_symcache_meta *m);

/* Source identity written into cache headers and compared when reopening. */
typedef struct tk_sc_source {
	uint64_t size;
	int64_t mtime_ns;
} tk_sc_source;
int tk_symcache_matches(const tk_symcache *c, const uint8_t uuid[16], uint32_t cputype, uint32_t cpusubtype,
                        const tk_sc_source *src);

/* ---------------------------------------------------------------- DWARF collector */

typedef struct tk_dw_scope {
	uint64_t lo, hi;
	uint32_t node;     /* index into nodes */
	uint32_t priority; /* DIE pre-order: deeper/later DIEs win, as LLVM paints them */
} tk_dw_scope;

typedef struct tk_dw_node {
	uint32_t name;      /* string offset (demangled) */
	uint32_t call_file; /* string offset */
	uint32_t call_line;
	uint32_t parent; /* TK_SC_NONE for a subprogram */
	uint32_t flags;  /* TK_SC_LOC_SWIFT */
} tk_dw_node;

typedef struct tk_dw_seg {
	uint64_t lo, hi;
	uint32_t a, b; /* layer dependent: (cu,-) / (file,line) / (node,-) */
} tk_dw_seg;

typedef struct tk_dw_result {
	tk_dw_node *nodes;
	size_t nnodes, capnodes;
	tk_dw_seg *cus; /* non-overlapping, sorted: a = CU index */
	size_t ncus, capcus;
	tk_dw_seg *lines; /* non-overlapping, sorted: a = file, b = line (or TK_SC_NONE file = no row) */
	size_t nlines, caplines;
	tk_dw_seg *scopes; /* non-overlapping, sorted: a = innermost node */
	size_t nscopes, capscopes;
} tk_dw_result;

int tk_dwarf_collect(const uint8_t *slice, size_t slice_size, const tk_macho_slice *sl, const char *name,
                     tk_strpool *pool, tk_dw_result *res, tk_error *err);
void tk_dw_result_free(tk_dw_result *r);

/* Paint possibly overlapping ranges into sorted non-overlapping segments, the highest priority
 * winning where they overlap; segments keep (a, b) of the winner. Zero-length ranges are dropped. */
typedef struct tk_paint_in {
	uint64_t lo, hi;
	uint32_t a, b;
	uint64_t priority;
} tk_paint_in;
size_t tk_paint(tk_paint_in *in, size_t n, tk_dw_seg **out);
void tk_sort_u64(uint64_t *v, size_t n);
void tk_sort_u64_buf(uint64_t *v, size_t n, uint64_t *tmp); /* tmp: room for n values */

/* ---------------------------------------------------------------- demangling */

/* Demangle an Itanium C++ name ("_Z…"; one leading '_' already dropped for Mach-O symbols).
 * Returns a malloc'd string or NULL if the name is not mangled C++. */
char *tk_demangle_cxx(const char *name);
int tk_is_swift_symbol(const char *name); /* "$s…", "_$s…", "$S", "_T0" … */
/* A symbol name as the cache stores it (one leading Mach-O '_' already dropped): C++ and Rust
 * demangled; Swift as "SIMPLIFIED\0FULL" with *flags = TK_SC_LOC_SWIFT (both forms the name itself
 * when it cannot be demangled). *len counts both parts and the NUL between them. NULL: store the
 * name as it is. Malloc'd. */
char *tk_sc_name(const char *name, size_t *len, uint32_t *flags);

#endif
