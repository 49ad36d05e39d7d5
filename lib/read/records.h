/*
 * read/records.h — CPU and hang records from in-process monitors (Records files). Internal to
 * lib/read/ (not installed): the records reader (tk_reader_records, tk_read_path on a session
 * directory) turns every record into an event of the profile (tracekit/profile.h), which is what
 * writers, the store, stats and the CLI read. This cursor stays for the reader itself and for the
 * unit tests and fuzz target that check it.
 *
 * A Records file is MTHawkeye's line format `collection,key,value` (split on the first two commas;
 * a later line with the same collection and key replaces the earlier one). tracekit's own monitor
 * (libtracekit-monitor, see docs/records-format.md) writes the same format, so one reader serves:
 *
 *   - a Records file (ours: `records`);
 *   - our session directory: `records` + `images.json` (loaded images, for symbolication);
 *   - an MTHawkeye session directory: `records.mtlog` then `records.mmap2` (cut at its first NUL or
 *     CR, as MTHawkeye reads it) + `dyld-images`.
 *
 * Records understood (other collections, e.g. MTHawkeye's `cpu`, `r-mem`, `fps`, are skipped):
 *
 *   cpu-highload + cpu-highload-stackframe   a period of high CPU load and its proportion tree
 *                                            (MTHawkeye's, and ours). The key is CFAbsoluteTime
 *                                            (seconds since 2001-01-01 UTC), kept as written.
 *   hang + hang-stackframe                   a main-thread hang (ours) and the blocked thread's tree
 *   anr                                      an MTHawkeye ANR record, chunked as `<unix>_<index>`
 *                                            (chunks merged by prefix), with its snapshots
 *
 * Loading a record makes one synthetic thread in a tk_profile whose samples are the tree's paths
 * (frames by raw address, root first), weighted in TK_UNIT_SAMPLES: a node's own weight is its
 * count minus its children's counts. Addresses are looked up as recorded: the leaf is the sampled
 * PC and every caller is already its return address minus one (MTHawkeye's and our convention). Frames carry
 * their image (path, build-id or UUID, load address) and no name: reading links no symbol code. The images of
 * images.json are also listed in the profile (tk_profile_images), and tk_elf_name_profile (tracekit/symbol.h)
 * names their frames from the ELF files on this machine (symbol tables, DWARF lines); MTHawkeye frames (dyld-images,
 * not listed) are named later from dSYMs (tk_symbolicate_profile).
 */
#ifndef TK_READ_RECORDS_H
#define TK_READ_RECORDS_H

#include <stddef.h>
#include <stdint.h>

#include "tracekit/error.h"
#include "tracekit/profile.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tk_record_kind {
	TK_RECORD_CPU = 1, /* cpu-highload */
	TK_RECORD_HANG,    /* hang (tracekit monitor) */
	TK_RECORD_ANR,     /* anr (MTHawkeye) */
} tk_record_kind;

typedef struct tk_record_info {
	tk_record_kind kind;
	const char *kind_name; /* "cpu-highload", "hang", "anr" */
	const char *key;       /* the key as written (anr: the prefix shared by its chunks) */
	double start;          /* wall-clock start, Unix seconds (cpu-highload keys converted from CFAbsoluteTime) */
	double duration;       /* seconds; NAN if not recorded */
	double avg_cpu;        /* average CPU in percent of one core (may exceed 100); NAN if not recorded */
	uint64_t samples;      /* samples in the tree (Σ root counts; anr: Σ capturedCount) */
	uint64_t tid;          /* the thread (hang, anr); 0 if the record spans threads */
	const char *thread;    /* its name; "" if unknown or not one thread */
	int has_tree;          /* a stack tree was recorded (otherwise loading adds no samples) */
	int live;              /* the writer marked it as still going on */
	int truncated;         /* the writer hit its node bound (deep paths were cut, counts still exact) */
	size_t nthreads;       /* hang: threads whose stacks were taken at detection (tk_records_load_threads) */
	uint32_t suppressed;   /* hang: identical hangs not reported since the previous report (back-off) */
	const char *where;     /* "file:line" of the line holding its tree (or its metadata) */
	/* The run that wrote it, in a session directory reused by several runs: the value of the
	 * launch-time line before it (NULL if none) and the pid of its own images file (-1 if unknown). */
	const char *launch_time;
	long long run_pid;
} tk_record_info;

typedef struct tk_records tk_records;

/* Open a Records file or a session directory (see above) and validate every record it
 * understands: JSON, node addresses, counts (a node's children may not count more than it). */
tk_records *tk_records_open(const char *path, tk_error *err);
/* The same over bytes in memory (one Records file); name is used in errors. */
tk_records *tk_records_parse(const void *data, size_t n, const char *name, tk_error *err);
void tk_records_free(tk_records *r);

/* Records in start order. */
size_t tk_records_count(const tk_records *r);
const tk_record_info *tk_records_get(const tk_records *r, size_t i);
/* Index of the record whose key is key or, failing that, starts with key (when only one does);
 * -1 if none, -2 if the prefix is ambiguous. */
ptrdiff_t tk_records_find(const tk_records *r, const char *key);

/* Facts about the session: "format" ("tracekit" or "mthawkeye"), "images" (images.json,
 * dyld-images or none), "launch-time" (Unix seconds), "os", "arch", "pid", "process" (the executable, or the app name),
 * "monitor-event" (the monitor's latest note about its own run, e.g. descriptors the program took from it).
 * NULL if unknown. */
const char *tk_records_meta(const tk_records *r, const char *key);

/* Load images (images.json shape) for symbolication, e.g. when records were copied elsewhere;
 * tk_records_open already loads the session's own. Returns 0 or -1 with err. */
int tk_records_load_images(tk_records *r, const char *path, tk_error *err);

enum {
	TK_RECORDS_NO_SYMBOLS = 1u << 0, /* list no images: tk_elf_name_profile leaves the frames as raw addresses */
	TK_RECORDS_CONTEXT = 1u << 1,    /* tk_records_load_all: each hang's snapshot as context threads of its event */
};

/* Add record i to p as one synthetic thread (tid = i + 1, name like "cpu-highload 2019-03-25
 * 11:02:01 UTC 132.6 s" or "hang main 2026-11-22 12:00:01 UTC 3.02 s") and set p's unit to
 * samples. Returns the thread, or -1 with err. */
int64_t tk_records_load(tk_records *r, size_t i, tk_profile *p, unsigned flags, tk_error *err);
/* Every record, one thread each. Returns 0 or -1 with err. */
int tk_records_load_all(tk_records *r, tk_profile *p, unsigned flags, tk_error *err);

/* A hang record's snapshot: the stack of every thread when the hang was detected, added to p as
 * one thread each (its real tid and name) with one sample. Returns the number of threads (0 when
 * the record has none), or -1 with err. */
int tk_records_load_threads(tk_records *r, size_t i, tk_profile *p, unsigned flags, tk_error *err);
/* The same snapshot without a profile: thread k's tid (as tk_records_load_threads keys its thread)
 * in *tid, the number of its frames in *nframes and the first cap of their addresses, leaf first,
 * in frames. Returns the number of threads, or -1 when the record holds its snapshot in a shape
 * only tk_records_load_threads reads. */
int tk_records_snapshot(const tk_records *r, size_t i, size_t k, uint64_t *tid, uint64_t *frames, size_t cap,
                        size_t *nframes);
/* The image of record i's run that holds addr, as tk_records_load_threads gives its frames: its path
 * (borrowed from r) and load address in *base; NULL when no image holds addr. */
const char *tk_records_image_at(const tk_records *r, size_t i, uint64_t addr, uint64_t *base);

/* Open path, load every record (tk_records_load_all), close: what tk_read_path does for a session
 * directory, and the tk_reader "records" for a Records file. Warnings are dropped. */
int tk_records_read(tk_profile *p, const char *path, unsigned flags, tk_error *err);
/* The same with tk_read_path's options (event_context, no_images, images). */
struct tk_read_options;
int tk_records_read_with(tk_profile *p, const char *path, const struct tk_read_options *o, tk_error *err);

/* Is the stream over bytes in memory (tk_input_open_mem), not a file? (lib/read/input.c) */
struct tk_input;
int tk_input_in_memory(const struct tk_input *in);

/* Problems that did not stop reading, one line each, in the order met. (Images whose files cannot be
 * used are reported by the naming pass: tk_elf_namer_warning.) */
size_t tk_records_warning_count(const tk_records *r);
const char *tk_records_warning(const tk_records *r, size_t i);

#ifdef __cplusplus
}
#endif
#endif
