/*
 * tracekit/write.h — writers: one per output format. Writers only read the model (or a call tree
 * built from it) and write to a stdio stream; they never parse. Each returns 0, or -1 with err when
 * the stream reports an error (a full disk, a closed pipe).
 */
#ifndef TRACEKIT_WRITE_H
#define TRACEKIT_WRITE_H

#include <stddef.h>
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

#ifdef __cplusplus
}
#endif
#endif
