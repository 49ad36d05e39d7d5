/*
 * tracekit/write.h — writers: one per output format. Writers only read the model (or a call tree
 * built from it) and write to a stdio stream; they never parse. Each returns 0, or -1 with err when
 * the stream reports an error (a full disk, a closed pipe).
 */
#ifndef TRACEKIT_WRITE_H
#define TRACEKIT_WRITE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tracekit/calltree.h"
#include "tracekit/error.h"
#include "tracekit/profile.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- folded stacks (Brendan Gregg's FlameGraph format, also read by inferno and speedscope) ----
 *
 * One line per distinct (thread, call path): frames root first separated by ';', a space, and the
 * summed weight as a decimal integer in the profile's unit. Lines with zero weight are omitted.
 *   - The first frame is the thread, "NAME tid=TID": the thread name, else the process name, else
 *     "thread". With no_thread, threads are merged and this frame is left out.
 *   - A frame is its label (symbol, or 0x + lowercase hex address). Call paths are compared by
 *     label, so two functions with the same label in different binaries share a line.
 *   - A sample with an empty stack is the thread frame alone; with no_thread it is the single frame
 *     "(no stack)", so the weights always add up to the profile's total.
 *   - ';' and line breaks inside a label would break the format and are written as ':' and ' '.
 *   - Order: threads as tk_calltree groups sorted by (total desc, pid, tid); within a thread, lines
 *     in byte order of their frames (depth first), so output is deterministic. */
typedef struct tk_folded_options {
	int no_thread;
} tk_folded_options;

int tk_write_folded(FILE *out, const tk_profile *p, const tk_folded_options *o, tk_error *err);

/* ---- call trees ---- */

/* Instruments-style text: per group a header line, then one row per node with total (ms for time
 * units, else the raw count), percent of the group, self, and "symbol  [binary]" indented with
 * tree guides. */
int tk_write_tree_text(FILE *out, const tk_calltree *t, tk_error *err);
/* JSON as documented in docs/json-tree.md. */
int tk_write_tree_json(FILE *out, const tk_calltree *t, tk_error *err);

/* ---- top functions ---- */

/* limit = 0 writes every entry. */
int tk_write_top_text(FILE *out, const tk_top *t, size_t limit, tk_error *err);
int tk_write_top_json(FILE *out, const tk_top *t, size_t limit, tk_error *err);

/* ---- flame graphs (SVG) ----
 *
 * tk_write_flamegraph draws a call tree as a self-contained, interactive SVG: one graph per group
 * of the tree (thread, process or all), all to one scale (the heaviest group as wide as the image,
 * each other as wide as its weight next to it), frames ordered as the tree's children (heaviest
 * first). It opens in any browser without network: click a frame to zoom into it (it then fills
 * the width), "Reset Zoom", "Search" (or Ctrl-F; a regular expression over names, or ?s=TERM in the
 * URL) highlights matches and prints the matched share ("of all threads", each sample counted once;
 * while a frame is zoomed, the share of that frame), hovering shows name, binary, total, self and
 * percent of the group, on one line cut before the matched share. Text is XML-escaped; bytes that are not
 * UTF-8 become '?'. Frames narrower than min_width pixels are left out with their subtrees, and
 * when more than max_frames frames are left the narrowest go too (the subtitle says how many), so
 * the file stays at a few MB (about 230 bytes per frame) whatever the input's size.
 *
 * By default the app's frames are warm colours, system libraries' (tk_binary_is_system) cool ones
 * and frames without a binary grey. A caller can colour nodes itself (a differential flame graph
 * colours B's tree by its growth over A) and add a tooltip line per node. */
#define TK_FLAME_WIDTH 1200.0
#define TK_FLAME_MIN_WIDTH 0.1
#define TK_FLAME_MAX_FRAMES 20000
#define TK_FLAME_DEFAULT_COLOR UINT32_MAX

typedef struct tk_flame_options {
	const char *title;    /* the heading; NULL = "Flame graph" */
	const char *subtitle; /* NULL = total, samples, groups and unit */
	double width;         /* pixels; 0 = TK_FLAME_WIDTH */
	double min_width;     /* pixels; 0 = TK_FLAME_MIN_WIDTH */
	size_t max_frames;    /* at most this many frames (the narrowest go first); 0 = TK_FLAME_MAX_FRAMES */
	int icicle;           /* roots at the top, callees below (default: roots at the bottom) */
	/* Optional: the fill of node n as 0xRRGGBB, or TK_FLAME_DEFAULT_COLOR for the default. */
	uint32_t (*color)(void *ctx, const tk_calltree *t, const tk_cnode *n);
	/* Optional: one more tooltip line for node n, written into buf (empty for none). */
	void (*note)(void *ctx, const tk_calltree *t, const tk_cnode *n, char *buf, size_t cap);
	void *ctx; /* passed to color and note */
} tk_flame_options;

void tk_flame_options_init(tk_flame_options *o);
/* Write t as an SVG flame graph; o may be NULL for the defaults. */
int tk_write_flamegraph(FILE *out, const tk_calltree *t, const tk_flame_options *o, tk_error *err);

/* An `xctrace export` time-profile table in the Xcode 14.3+ form (what `tracekit symbolicate`
 * writes; tk_symbol_write_xctrace in symbol.h is the same function under its older name). */
int tk_write_xctrace(FILE *out, const tk_profile *p, tk_error *err);

/* ---- a profile's summary (`tracekit info`) ----
 * file (the input's name as shown), the unit, the reader's metadata (text: schema, stack-encoding,
 * xcode-form, symbolicated, run, table, xpath, rows, rows-in-time-range, skipped-tables,
 * kdebug-images; JSON: every key), time span, samples and weight, then each process (pid + name)
 * and its threads with samples and weight, heaviest first (threads of equal weight by tid). Text
 * escapes control characters and invalid UTF-8 in names as \xHH. */
int tk_write_info_text(FILE *out, const tk_profile *p, const char *file, tk_error *err);
int tk_write_info_json(FILE *out, const tk_profile *p, const char *file, tk_error *err);
/* A table of contents (tracekit/toc.h) for people (text) or scripts (JSON), file naming it. */
struct tk_toc;
int tk_write_toc_text(FILE *out, const struct tk_toc *toc, const char *file, tk_error *err);
int tk_write_toc_json(FILE *out, const struct tk_toc *toc, const char *file, tk_error *err);

/* ---- events: CPU high-load and hang records … (`tracekit records`) ----
 * The list: begin with the number of events, add each event e of p, end writes the JSON array or
 * the closing line and checks the stream (abort drops a list after a failure). A row shows the
 * event's name, key, wall-clock start, duration, "cpu.average", "samples", "thread"/"tid" and flags,
 * and names the heaviest leaf of the thread it is drawn on (frames without a name as
 * image+0xOFFSET). Times are local (ISO 8601 with offset) unless use_utc; JSON is UTC. */
typedef struct tk_record_list tk_record_list;
tk_record_list *tk_record_list_begin(FILE *out, size_t n, int json, int use_utc);
void tk_record_list_add(tk_record_list *l, const tk_profile *p, tk_event_id e);
int tk_record_list_end(tk_record_list *l, tk_error *err);
void tk_record_list_abort(tk_record_list *l);
/* One record's call tree of thread t: samples, percent, label and address or image+offset,
 * file:line, [inlined] and [self N], children heaviest first; subtrees under min_percent are
 * counted in a closing line. */
int tk_write_record_tree(FILE *out, const tk_profile *p, tk_thread_id t, double min_percent, tk_error *err);
/* A hang's captured threads: "thread TID NAME", then the backtrace leaf first (#N 0xADDR name). */
int tk_write_record_threads(FILE *out, const tk_profile *p, tk_error *err);
/* The same for the context threads of event e (read with tk_read_options.event_context). */
int tk_write_event_threads(FILE *out, const tk_profile *p, tk_event_id e, tk_error *err);

/* ---- function spread across profiles (`tracekit stats --functions`, tracekit/stats.h) ----
 * Text (names made terminal-safe) or JSON; limit rows of the spread table (0 = all), then the top 10
 * functions of the heaviest 5 % of inputs. */
struct tk_fntable;
struct tk_fn_spread;
int tk_write_fn_spread(FILE *out, const struct tk_fntable *ft, const struct tk_fn_spread *s, size_t limit, int json,
                       tk_error *err);

/* ---- the format table: `tracekit convert --to NAME` and OUT's extension ----
 *
 * Every whole-profile output format is one entry: a name, the file extensions that select it, and
 * a function that writes the profile. A new format is one new file in lib/write/ plus its line in
 * lib/write/formats.c. Writers stream: they hold the model (and at most a tree built from it),
 * never a DOM of their output. */
typedef struct tk_convert_options {
	const char *title; /* shown by viewers (the input's name); NULL for a default */
	const char *input; /* the input's path, for writers that record it; may be NULL */
	int merge_threads; /* one merged stack set instead of one per thread (svg, folded) */
	int inverted;      /* icicle / bottom-up where the format has it (svg) */
	double min_width;  /* svg: frames narrower than this many pixels are left out; 0 = default */
	int binary_ok;     /* the output is a file, not a terminal (pprof is gzip'd protobuf) */
	size_t max_frames; /* svg: at most this many frames, the lightest left out first; 0 = default */
} tk_convert_options;

void tk_convert_options_init(tk_convert_options *o);

typedef int (*tk_writer_fn)(FILE *out, const tk_profile *p, const tk_convert_options *o, tk_error *err);

typedef struct tk_writer {
	const char *name;        /* "gecko", "speedscope", "pprof", "svg", "folded", "json" */
	const char *extensions;  /* space-separated, longest first: ".speedscope.json .ss.json" */
	const char *description; /* one line for --help */
	int binary;              /* writes bytes that must not go to a terminal */
	tk_writer_fn write;
} tk_writer;

/* The table, in --help order. */
const tk_writer *tk_writers(size_t *n);
/* By name (exact), NULL if unknown. */
const tk_writer *tk_writer_find(const char *name);
/* By the longest extension that ends path, NULL if none matches. */
const tk_writer *tk_writer_for_path(const char *path);

/* ---- Firefox Profiler ----
 *
 * The profiler's processed format (preprocessedProfileVersion 60, which every current profiler
 * upgrades), because the Gecko format has no per-sample weights: one thread per model thread with
 * pid, tid, thread and process names; stack, frame and function tables shared by all threads (the
 * model's prefix tree, so memory in the profiler grows with distinct stacks); samples in time order
 * from the per-sample list (tk_profile_keep_samples) with their weights (ns as "tracing-ms", other
 * units as "samples"), or one sample per distinct stack when the list is off; `libs` from the
 * binaries (breakpadId = UUID + "0"), frame addresses relative to their image (return addresses
 * minus one) so a symbol server can name unsymbolicated frames; file:line where the model has them;
 * categories Other / App / System. `meta.symbolicated` is false when some frame with an image has no
 * name. Events (profile.h) are drawn from the profile: the thread an event is drawn on starts at the
 * event's wall-clock start (relative to the earliest event's), its cells spread over its duration,
 * and it carries one interval marker (TracekitRecord: name as kind, key, "cpu.average", "samples"). Streams: holds only per-frame and per-function tables; samples that arrived in time order are
 * written straight from the compact sample list, and only a thread whose rows go back in time is
 * unpacked (24 bytes per row of that thread) to be sorted. */
int tk_write_gecko(FILE *out, const tk_profile *p, const tk_convert_options *o, tk_error *err);

#ifdef __cplusplus
}
#endif
#endif
