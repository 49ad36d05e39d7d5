/*
 * tracekit/read.h — readers: one per input format, all filling a tk_profile.
 *
 * tk_read_path() opens a path ("-" is standard input), undoes gzip if the bytes say so, sniffs the
 * format and runs the matching reader. Inputs are streamed: nothing holds the whole document.
 *
 * The xctrace reader (`xcrun xctrace export --xpath …` documents)
 *   tables    time-profile (weights in ns), cpu-profile (cycles), counters-profile (PMC events) and
 *             time-sample (one sample per row: TK_UNIT_SAMPLES; the kperf rows carry no weight, and
 *             the toc's sample rate is not in the export, so counting is the honest unit). Several
 *             <node>s in one document are read with one id table; nodes of other schemas are
 *             skipped (meta "skipped-tables"), and a document with none of the four is an error.
 *   stacks    every encoding: text-addresses fragments (before Xcode 14.3: decimal, leaf first,
 *             concatenated, trailing 0 dropped, no names), <backtrace><frame><binary><source>
 *             (14.3–26.0), <tagged-backtrace><backtrace> (26.4), frames directly under
 *             <tagged-backtrace> (27) and time-sample's <kperf-bt> (user callstack: the PC, then the
 *             callers; a stackshot's list already starts with the PC). The leaf frame carries
 *             TK_FRAME_LEAF_PC; addresses are kept as recorded; a hex-only name ("0x1047b15cd")
 *             means unsymbolicated, so the frame gets no name. A <sentinel/> stack is the empty stack
 *             and keeps its weight.
 *   threads   (pid, tid) from <tid>/<pid>; the name from the thread's fmt in every known layout
 *             ("Main Thread  0xe7716 (java, pid: 23369)", "idle #6 (0x4e3) (kernel, pid: 0)" …).
 *   meta      format, schema, stack-encoding, xcode-form, symbolicated (yes/partly/no), xpath, run,
 *             rows, rows-in-time-range, skipped-tables, tokenizer, kdebug-images.
 *   images    `kdebug` and `kdebug-strings` nodes in the same document (an xpath union) are not
 *             skipped: dyld's UUID-map events become the profile's image list (tk_profile_images),
 *             for symbolicating address-only stacks (docs/symbolication.md; verified only against
 *             the documented format). Frames with tracekit's inlined="1" get TK_FRAME_INLINED.
 *   memory    grows with distinct values (threads, frames, binaries, stacks, fragments, weights),
 *             never with rows: xctrace writes repeats as refs. The one per-row value, sample-time,
 *             is kept for the last 4096 ids only; a ref further back is reported as an error.
 *   tokenizer TK_READ_TOKENIZER_FAST by default: a specialised, validating streaming tokenizer
 *             (lib/read/xml_fast.c) about 3x faster than libxml2's SAX parser, which stays
 *             available as the reference and is fuzzed against it (tests/fuzz/fuzz_xml_diff.c).
 * The toc reader (`--toc`) is in toc.h.
 */
#ifndef TRACEKIT_READ_H
#define TRACEKIT_READ_H

#include <stddef.h>
#include <stdint.h>

#include "tracekit/error.h"
#include "tracekit/profile.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tk_read_options {
	uint64_t time_from, time_to; /* keep samples with time_from <= t < time_to (ns since run start) */
	/* Called now and then with the bytes consumed so far and the total (0 if unknown, e.g. a pipe). */
	void (*progress)(void *ctx, uint64_t done, uint64_t total);
	void *progress_ctx;
	/* XML tokenizer for xctrace exports: TK_READ_TOKENIZER_FAST (default, the specialised streaming
	 * tokenizer) or TK_READ_TOKENIZER_LIBXML2 (libxml2's SAX parser, the slower reference). */
	int tokenizer;
	/* Events (profile.h): also load what each event's input holds besides its own stacks, e.g. the
	 * snapshot of every thread taken when a hang was detected, as threads of role TK_ROLE_CONTEXT
	 * (one per snapshot thread and event, never merged with another's). Off by default: writers
	 * then see the same threads as before events existed. */
	int event_context;
	/* Records: list no images, so naming passes leave frames as raw addresses (records --no-symbols). */
	int no_images;
	/* Records: take loaded images from this images.json or dyld-images file as well as the session's
	 * own (records --images); NULL for none. */
	const char *images;
	/* Records: the images.json content itself (images_len bytes) instead of reading the file
	 * `images`, which then only names it in errors; NULL: read `images` from disk. */
	const void *images_data;
	size_t images_len;
	/* The reader for an input no reader recognises (e.g. &tk_reader_records, so that its own error
	 * names the line at fault); NULL: such an input is an error. */
	const struct tk_reader *fallback;
	/* Sampling profilers' text (perf script, simpleperf): which event to read when a file holds
	 * several (`perf record -e cycles,instructions`); samples of different events are never added
	 * together. NULL = the first event in the file. A name matches with or without perf's
	 * modifiers ("cycles" matches "cycles:u"); a name the file lacks is an error listing its events. */
	const char *event;
	/* TK_READ_WEIGHT_SAMPLES (default: each sample weighs 1, unit "samples") or
	 * TK_READ_WEIGHT_PERIOD (each weighs its period, as FlameGraph and inferno sum it: ns for
	 * cpu-clock/task-clock, cycles for cycles, events otherwise). Formats without a period ignore it. */
	int weight;
	/* Text readers (folded stacks): skip lines that fit no rule instead of failing on the first;
	 * they are counted (meta "skipped-lines") and reported through warn. */
	int keep_going;
	/* Differential folded stacks (`STACK BEFORE AFTER`, difffolded.pl / inferno-diff-folded) hold
	 * two runs: 1 reads the first count, 2 (the default, what flamegraph.pl draws) the second. Set
	 * on any other input it is an error. */
	unsigned run;
	/* Called with a one-line warning about an input that was read (a truncated report, skipped
	 * lines); NULL drops them. Readers never print. */
	void (*warn)(void *ctx, const char *message);
	void *warn_ctx;
} tk_read_options;

enum { TK_READ_TOKENIZER_FAST = 0, TK_READ_TOKENIZER_LIBXML2 = 1 };
enum { TK_READ_WEIGHT_SAMPLES = 0, TK_READ_WEIGHT_PERIOD = 1 };

void tk_read_options_init(tk_read_options *o); /* everything kept, no progress */

/* Read PATH into p. Returns 0, or -1 with err naming the file, line:column and the problem; on
 * error the profile must not be presented as complete. */
int tk_read_path(tk_profile *p, const char *path, const tk_read_options *o, tk_error *err);

typedef struct tk_input tk_input;

/* ---- input streams ----
 *
 * A tk_input is a byte stream over a file or standard input ("-"). When the first bytes are the
 * gzip magic (1f 8b) the stream is inflated transparently (concatenated members included), so
 * readers always see the plain document. The first bytes are buffered at open time so the
 * registry can sniff the format without consuming them.
 */
tk_input *tk_input_open(const char *path, tk_error *err);
/* A stream over bytes in memory (not copied; they must outlive the stream). name is used in
 * error messages. Gzip is undone here too. */
tk_input *tk_input_open_mem(const void *data, size_t n, const char *name, tk_error *err);
void tk_input_close(tk_input *in);
/* Read up to n bytes into buf. Returns the number read, 0 at the end, or -1 with err set
 * (I/O error, corrupt or truncated gzip). */
ptrdiff_t tk_input_read(tk_input *in, void *buf, size_t n, tk_error *err);
/* Call check(ctx, err) before every read: a non-zero return fails that read (-1) with check's err.
 * Lets a caller bound what a reader builds (stacks, time) while it reads, e.g. for an upload. */
void tk_input_set_check(tk_input *in, int (*check)(void *ctx, tk_error *err), void *ctx);
/* The first bytes of the (decompressed) stream, up to TK_INPUT_HEAD, without consuming them;
 * valid only before the first tk_input_read. */
#define TK_INPUT_HEAD 4096
const unsigned char *tk_input_head(const tk_input *in, size_t *n);
/* The name to show in errors: the path, "<stdin>" for "-", or the name given to open_mem. */
const char *tk_input_name(const tk_input *in);
/* Raw (compressed, if gzip) bytes consumed so far and the raw total (0 if unknown, e.g. a pipe):
 * what progress reporting should show. */
uint64_t tk_input_consumed(const tk_input *in);
uint64_t tk_input_total(const tk_input *in);
int tk_input_is_gzip(const tk_input *in);

/* Sniff and read an already opened stream (tk_read_path is open + this + close). */
int tk_read_input(tk_profile *p, tk_input *in, const tk_read_options *o, tk_error *err);

/* A reader for one format. The registry (lib/read/registry.c) lists them; sniff() sees the first
 * bytes of the (decompressed) input and returns non-zero if it recognises them. */
typedef struct tk_reader {
	const char *name; /* "xctrace", "records" … */
	int (*sniff)(const unsigned char *head, size_t n);
	int (*read)(tk_profile *p, tk_input *in, const tk_read_options *o, tk_error *err);
} tk_reader;

/* The readers the registry knows. */
extern const tk_reader tk_reader_xctrace; /* `xcrun xctrace export` XML (tables and --toc) */
/* Records files and session directories (tracekit monitor, MTHawkeye; docs/records-format.md): each
 * CPU high-load, hang or ANR record is an event of the profile (profile.h) with its stacks as one
 * thread (tid = its position, 1, 2, …); with event_context, a hang's snapshot as context threads. */
extern const tk_reader tk_reader_records;
/* Text formats (one file each in lib/read/, described there and in README's "Input formats"):
 * Instruments Deep Copy call trees, macOS `sample` reports, folded stacks (ours, FlameGraph's,
 * inferno's) and Linux `perf script` text. Each rejects what it cannot read with FILE:LINE. */
extern const tk_reader tk_reader_deepcopy;
extern const tk_reader tk_reader_sample;
extern const tk_reader tk_reader_folded;
extern const tk_reader tk_reader_perf;
/* Android simpleperf's `report-sample` text (sample:/callchain: blocks); its perf-script-like
 * report_sample.py output is read by tk_reader_perf. */
extern const tk_reader tk_reader_simpleperf;
/* DTrace aggregations of stacks (`@[ustack()] = count();`, stack(), several stacks per key): the
 * input of FlameGraph's stackcollapse.pl and inferno's collapse-dtrace. */
extern const tk_reader tk_reader_dtrace;
/* The reader whose sniff() accepts head, or NULL. */
const tk_reader *tk_reader_find(const unsigned char *head, size_t n);
/* The i-th registered reader, NULL past the end (for listings and tests). */
const tk_reader *tk_reader_at(size_t i);

#ifdef __cplusplus
}
#endif
#endif
