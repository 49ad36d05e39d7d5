/*
 * tracekit/symbol.h — symbolication of Apple-platform addresses without a Mac.
 *
 * Addresses recorded on iOS/macOS (Instruments exports, crash reports, the monitor's records) are
 * runtime addresses inside images identified by (UUID, arch) and a load address. This API turns
 * them into inline chains of (function, file, line) using the dSYM (DWARF) of the image, or only
 * its symbol table when no dSYM is found:
 *
 *   tk_symbolicator *s = tk_symbolicator_new(NULL);           // default cache directory
 *   tk_symbolicator_add_path(s, "build/Products", &err);       // dirs, .dSYM, .app, binaries, caches
 *   tk_symbol_image *im = tk_symbolicator_image(s, "4C4C44A4-…", NULL, "arm64", &err);
 *   tk_symbol_result r;
 *   tk_symbol_image_lookup(im, tk_symbol_image_file_addr(im, load_addr, runtime_addr - 1), &r);
 *
 * Each (UUID, arch) is converted once into a symbol cache file (`<UUID>-<arch>.tksym` in the cache
 * directory: sorted address ranges → inline chain of function/file/line, mmap'ed and used with no
 * parsing at open). A cache whose checksum, size, version or source (size, mtime, UUID) does not
 * match is rebuilt, never trusted. The results match llvm-symbolizer --inlining exactly (function
 * chain, file, line; the outermost name comes from the symbol table when it has one, as LLVM does).
 *
 * Address conventions (see also tk_symbolicate_profile):
 *   file address = runtime address − load address + __TEXT vmaddr   (slide = load − vmaddr)
 *   return addresses must be looked up at addr − 1 so calls at the end of a function or line
 *   resolve to the call site; the sampled PC of a leaf is looked up as is.
 */
#ifndef TRACEKIT_SYMBOL_H
#define TRACEKIT_SYMBOL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tracekit/error.h"
#include "tracekit/profile.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A symbolicator and its images are not thread-safe: use one per thread (caches are shared
 * through the file system and the page cache). */
typedef struct tk_symbolicator tk_symbolicator;
typedef struct tk_symbol_image tk_symbol_image; /* owned by the symbolicator */

typedef struct tk_symbol_options {
	/* Where caches are kept. NULL: $TRACEKIT_CACHE_DIR, else $XDG_CACHE_HOME/tracekit, else
	 * ~/.cache/tracekit (never a shared /tmp: without HOME, caches stay in memory). The directory is created 0700
	 * on first use, and used only when it belongs to this user and no one else may write to it; so are the cache
	 * files in it. */
	const char *cache_dir;
	/* Non-zero: never write cache files (caches are built in memory for this process only). */
	int no_cache_write;
	/* At most this many images stay mapped at once; the least recently used is closed (0 = 64).
	 * Bounds memory when thousands of dSYMs are involved. */
	size_t max_open;
} tk_symbol_options;

void tk_symbol_options_init(tk_symbol_options *o);

/* A new symbolicator with no search paths. o may be NULL for the defaults. */
tk_symbolicator *tk_symbolicator_new(const tk_symbol_options *o);
void tk_symbolicator_free(tk_symbolicator *s);

/* Add a place to look for images: a directory (searched recursively, following .dSYM and .app
 * bundles and Xcode's iOS DeviceSupport/<version>/Symbols layout), a .dSYM bundle, a Mach-O binary
 * or dSYM DWARF file (thin or universal), or a .tksym cache file. Directories are indexed lazily,
 * on the first lookup by UUID. Returns 0, or -1 if the path does not exist or a file is not a
 * Mach-O or cache. */
int tk_symbolicator_add_path(tk_symbolicator *s, const char *path, tk_error *err);

/* Find an image by UUID ("4C4C44A4-5555-3144-A178-6F015627038B", dashes optional) and/or by path,
 * for arch (NULL: the only slice, else arm64e, arm64, x86_64). With a uuid the search paths are
 * consulted (dSYMs preferred over binaries); with only a path, that file is used. The UUID and arch
 * of what is found must match: a mismatch is an error naming both. Returns NULL with err when
 * nothing suitable exists. The handle stays valid until tk_symbolicator_free. */
tk_symbol_image *tk_symbolicator_image(tk_symbolicator *s, const char *uuid, const char *path, const char *arch,
                                       tk_error *err);

#define TK_SYMBOL_MAX_FRAMES 64

typedef struct tk_symbol_frame {
	const char *function;  /* demangled C/C++/Rust name; Swift in the simplified form atos and
	                          Instruments print ("ViewController.viewDidLoad()"); "??" if unknown */
	const char *file;      /* source path as in the debug info; NULL if unknown */
	uint32_t line;         /* 0 if unknown */
	uint32_t flags;        /* TK_FRAME_INLINED (all but the outermost), TK_FRAME_SWIFT */
	const char *full_name; /* Swift: the full form swift-demangle prints; otherwise == function */
} tk_symbol_frame;

typedef struct tk_symbol_result {
	size_t nframes;                               /* 0: the address is in no known function */
	tk_symbol_frame frames[TK_SYMBOL_MAX_FRAMES]; /* innermost first */
	int symtab_only;                              /* only the symbol table covered the address (no debug info) */
	uint64_t symbol_start;                        /* with symtab_only: file address of the symbol, for "+ offset" */
} tk_symbol_result;

/* Look up a file address (not a runtime address). Returns the number of frames (0 = nothing). The
 * strings point into the image's mapped cache: they stay valid until the next tk_symbolicator_image
 * call, which may unmap the least recently used image (at most max_open stay mapped). */
size_t tk_symbol_image_lookup(tk_symbol_image *im, uint64_t file_addr, tk_symbol_result *r);
/* runtime address → file address for an image loaded at load_addr. */
uint64_t tk_symbol_image_file_addr(const tk_symbol_image *im, uint64_t load_addr, uint64_t runtime_addr);

typedef struct tk_symcache_meta {
	uint32_t version;
	uint8_t uuid[16];
	char uuid_str[37];
	char arch[16];
	uint64_t text_vmaddr, text_vmsize;
	const char *image; /* basename of the binary: the "(in X)" of atos */
	int has_dwarf;     /* 0: built from the symbol table only */
	uint64_t nranges, nlocs, string_bytes, file_size;
} tk_symcache_meta;

void tk_symbol_image_meta(const tk_symbol_image *im, tk_symcache_meta *m);
/* The binary's name, the "(in X)" of atos; valid as long as the symbolicator. */
const char *tk_symbol_image_name(const tk_symbol_image *im);
/* Path of the Mach-O the image was built from and of its cache file (NULL if in memory only). */
const char *tk_symbol_image_source(const tk_symbol_image *im);
const char *tk_symbol_image_cache_path(const tk_symbol_image *im);

/* Why the cache directory could not be used or a cache file not written ("" if it could). */
const char *tk_symbolicator_cache_error(const tk_symbolicator *s);

/* Build (or refresh) the caches of every slice of a dSYM bundle, DWARF file or binary into the
 * cache directory of s; calls done(ctx, meta, cache_path) for each slice written or found valid.
 * Fails when a cache cannot be written there (tk_symbolicator_cache_error says why). */
int tk_symcache_build_path(tk_symbolicator *s, const char *path, const char *arch,
                           void (*done)(void *ctx, const tk_symcache_meta *m, const char *cache_path), void *ctx,
                           tk_error *err);

/* ---- the Firefox Profiler's symbolication API (/symbolicate/v5, as `tracekit open` serves it) ----
 * Answers a request of Mozilla's symbolication API, version 5 ({"jobs":[{"memoryMap":[[debugName,
 * breakpadId]…], "stacks":[[[moduleIndex, offset]…]…]}]}) from s: images are found by the UUID in the
 * breakpad id, in s's search paths or else in its cache directory; each frame gets its function,
 * function_offset (from the lowest requested address of the same function in its stack), file, line
 * and inlines (innermost first). Text that is not valid UTF-8 is answered with U+FFFD. The request is
 * bounded before it is parsed: at most max_request bytes and max_arrays JSON arrays (one per frame,
 * stack and module), and the answer at max_response bytes; 0 means the default. On 0, *response is the JSON answer
 * (malloc'd, NUL-terminated, *response_n bytes). Returns 0; -1 with err for a malformed request (HTTP 400); 1 with err
 * when the request is over a limit (HTTP 413). */
#define TK_SYMBOLICATE_V5_MAX_REQUEST (16u << 20)
#define TK_SYMBOLICATE_V5_MAX_ARRAYS 500000u
#define TK_SYMBOLICATE_V5_MAX_RESPONSE (256u << 20)
typedef struct tk_symbolicate_v5_limits {
	size_t max_request, max_arrays, max_response;
} tk_symbolicate_v5_limits;
int tk_symbolicate_v5(tk_symbolicator *s, const void *request, size_t n, const tk_symbolicate_v5_limits *lim,
                      char **response, size_t *response_n, tk_error *err);

/* ---- profiles ---- */

/* An image the user knows was loaded at load_addr, for frames that carry only an address
 * (pre-Xcode 14.3 text-addresses exports). path or uuid (or both) identify it. */
typedef struct tk_image_spec {
	const char *path;
	const char *uuid;
	const char *arch;
	uint64_t load_addr;
} tk_image_spec;

enum {
	/* How addresses are adjusted before lookup (see tk_symbolicate_options.adjust). */
	TK_ADJUST_AUTO = 0, /* callers: addr−1; leaves (TK_FRAME_LEAF_PC): arm64 PC = addr & ~3, else addr−1
	                       for frames with a binary (xctrace 14.3+ stores PC+1) and addr for address-only frames */
	TK_ADJUST_NONE,     /* look every address up as is */
	TK_ADJUST_MINUS1,   /* look every address up at addr−1 */
};

typedef struct tk_symbolicate_options {
	int adjust;                  /* TK_ADJUST_* */
	uint64_t pac_mask;           /* 0: by arch (arm64/arm64e: low 40 bits kept; x86_64: none) */
	const tk_image_spec *images; /* for frames without a binary; may be NULL */
	size_t nimages;
	/* Filled on return (may be NULL): frames resolved / left as they were. */
	size_t *resolved, *unresolved;
	/* Called once per image that could not be found or opened, with the reason (may be NULL). */
	void (*warn)(void *ctx, const char *message);
	void *warn_ctx;
} tk_symbolicate_options;

void tk_symbolicate_options_init(tk_symbolicate_options *o);

/* A new profile where every frame with a binary (UUID, load address) — or an address inside one
 * of o->images — is replaced by the inline chain found for it: the outermost function gets the
 * frame's place, inlined callees follow as extra frames flagged TK_FRAME_INLINED, each with
 * file:line. Frames that cannot be resolved stay as they were (counted in o->unresolved, with one
 * warning per missing image). Threads, weights, sample counts and metadata are kept; the meta key
 * "symbolicated" is set to "tracekit". The per-sample list (tk_profile_keep_samples) and the image
 * list are carried over.
 * Without o->images, the profile's own image list (tk_profile_images: the kdebug tables of a
 * pre-14.3 export) is used for address-only frames; those images without a dSYM are summed up in
 * one warning. A frame flagged TK_FRAME_INLINED (the reader sets it from tracekit's inlined="1")
 * is never looked up itself: below an outer frame at the same address and binary that this run
 * resolves, it is dropped (the new chain replaces it), otherwise kept, so symbolicating twice
 * equals symbolicating once. Returns NULL with err only on invalid options. */
tk_profile *tk_symbolicate_profile(const tk_profile *in, tk_symbolicator *s, const tk_symbolicate_options *o,
                                   tk_error *err);
/* The same answer, taking p: when every frame carries its binary (MetricKit, .ips, xctrace 14.3+)
 * its frames are renamed in place — each looked up once, inlined callees added as frames and the
 * stack tree respelled only when a chain has more than one function — and p itself is returned;
 * otherwise (images for address-only frames, a per-sample list, frames of an earlier run, two
 * frames that become one) p is derived as above and freed. NULL with err (p untouched) only on
 * invalid options. */
tk_profile *tk_symbolicate_profile_take(tk_profile *p, tk_symbolicator *s, const tk_symbolicate_options *o,
                                        tk_error *err);

/* Write p as an `xctrace export` time-profile table in the Xcode 14.3+ form (frames with name,
 * address, <binary>, <source line><path>; inlined functions as frames of their own), readable by
 * tracekit and other consumers of xctrace XML; a cycles profile is written as cpu-profile. With the
 * per-sample list (tk_profile_keep_samples) every sample is one row with its own time and weight,
 * in order; without it each (thread, stack) cell becomes `samples` rows whose weights sum to the
 * cell's weight, at the thread's first sample time. Inlined frames carry inlined="1" (see
 * tk_symbolicate_profile). Returns 0, or -1 with err on a write error. */
int tk_symbol_write_xctrace(FILE *out, const tk_profile *p, tk_error *err);

/* Demangle an Itanium C++ symbol (with or without the Mach-O leading '_'); NULL if it is not one.
 * The result is malloc'd. */
char *tk_demangle(const char *symbol);
int tk_symbol_is_swift(const char *symbol);

enum {
	TK_DEMANGLE_FULL = 0,       /* what swift-demangle / c++filt print: modules, signatures */
	TK_DEMANGLE_SIMPLIFIED = 1, /* Swift: what atos, Instruments and crash reports print */
};

/* Demangle a Swift symbol ("$s…", "_$s…", "$e…", Swift 4.2 "$S…", Swift 4 "_T0…", older "_T…";
 * Mach-O's extra leading '_' accepted) into out (cap bytes, NUL-terminated). Returns the length
 * written, or 0 when the name is not a Swift symbol this demangler understands (out is then
 * unspecified: show the input unchanged). Needs no allocation per call and never reads past
 * in[len). Thread-safe. */
size_t tk_swift_demangle(const char *in, size_t len, char *out, size_t cap, int flags);

/* Any mangled name (Itanium C++, Rust legacy and v0, Swift) with or without the Mach-O leading
 * '_'; flags as above. Returns a malloc'd string, or NULL if the name is not mangled (or not
 * understood). */
char *tk_demangle_any(const char *symbol, int flags);

/* ---- naming frames from the ELF files of this machine (Linux monitor sessions) ----
 *
 * The records reader (tracekit/records.h) leaves frames as (image, address) and lists the
 * session's images that are files of this machine in the profile (tk_profile_images). This pass
 * names the frames of those images from their symbol tables and DWARF (separate debug files found
 * the standard way), inlined calls as extra frames flagged TK_FRAME_INLINED, each with file:line;
 * an image whose build-id differs from the recorded one is not used. Recorded addresses are call
 * sites already and are looked up as they are. A namer keeps the opened files and its warnings
 * across profiles of one session (one namer per thread). */
typedef struct tk_elf_namer tk_elf_namer;
tk_elf_namer *tk_elf_namer_new(void);
void tk_elf_namer_free(tk_elf_namer *z);
/* Images that could not be used (missing, not ELF, another build-id), one line each; each image
 * is reported once per namer, beyond ten per profile with one line counting the rest. */
size_t tk_elf_namer_warning_count(const tk_elf_namer *z);
const char *tk_elf_namer_warning(const tk_elf_namer *z, size_t i);
/* A new profile with the listed images' unnamed frames named; everything else (threads, weights,
 * metadata, image list, per-sample list) as in. NULL with err only when out of options to go on. */
tk_profile *tk_elf_name_profile(const tk_profile *in, tk_elf_namer *z, tk_error *err);
/* In place: *p is replaced by its named copy when one of its listed images can be used, and left
 * as it is otherwise (a session read on another machine: nothing to name, nothing copied). Returns
 * 0, or -1 with err. z may be NULL (a namer for this call; its warnings are dropped). */
int tk_elf_name_listed(tk_profile **p, tk_elf_namer *z, tk_error *err);
/* What readers of sessions do after tk_read_path: when *p came from Records (meta "format" is
 * "tracekit" or "mthawkeye") and lists images, replace it by its named copy. z may be NULL (a
 * namer for this call; its warnings are dropped). Returns 0, or -1 with err. */
int tk_elf_name_session(tk_profile **p, tk_elf_namer *z, tk_error *err);

/* ---- atos-compatible answers (lib/write/atos.c; `tracekit atos`) ---- */
typedef enum tk_atos_mode {
	TK_ATOS_FILE_ADDR = 0, /* addresses are the image's own (file) addresses */
	TK_ATOS_LOAD,          /* runtime addresses, the image loaded at load (atos -l) */
	TK_ATOS_SLIDE,         /* runtime = file address + slide (atos -s) */
	TK_ATOS_OFFSET,        /* offsets from the start of the image (atos -offset) */
} tk_atos_mode;

typedef struct tk_atos_options {
	tk_atos_mode mode;
	uint64_t load, slide;
	int inlined;     /* every inlined frame, innermost first, one line each (atos -i) */
	int json;        /* one JSON object per address: address, file_address, image, frames */
	int full_names;  /* Swift names in swift-demangle's full form instead of atos's short one */
	int interactive; /* a stream is answered line by line (a terminal), not in chunks */
	/* Called for an address that is not hex and an image that cannot be used (batch mode). */
	void (*warn)(void *ctx, const char *message);
	void *warn_ctx;
} tk_atos_options;

/* Answers written to out: the image is im (addresses per o->mode), or, with im NULL, named by the
 * first token of each line of tk_atos_batch (a UUID or path, optionally :ARCH and @LOADADDR).
 * o must outlive the tk_atos. Every writing call returns 0, or -1 with err when out failed. */
typedef struct tk_atos tk_atos;
tk_atos *tk_atos_new(tk_symbolicator *s, tk_symbol_image *im, FILE *out, const tk_atos_options *o);
void tk_atos_free(tk_atos *a);
/* The addresses given (e.g. on the command line), answered in order. */
int tk_atos_args(tk_atos *a, char *const *addrs, size_t n, tk_error *err);
/* Whitespace-separated addresses from in, answered in input order. */
int tk_atos_stream(tk_atos *a, FILE *in, tk_error *err);
/* Lines `IMAGE ADDRESS…` from in (atos --search). */
int tk_atos_batch(tk_atos *a, FILE *in, tk_error *err);
/* Addresses answered with no function so far (unknown, or not hex). */
size_t tk_atos_unknown(const tk_atos *a);
/* Hex with or without 0x, at most 64 bits: 0, or -1 when s is not that. */
int tk_atos_parse_hex(const char *s, uint64_t *v);

#ifdef __cplusplus
}
#endif
#endif
