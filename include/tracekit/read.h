/*
 * tracekit/read.h — readers: one per input format, all filling a tk_profile.
 *
 * tk_read_path() opens a path ("-" is standard input), undoes gzip if the bytes say so, sniffs the
 * format and runs the matching reader. Inputs are streamed: nothing holds the whole document.
 */
#ifndef TRACEKIT_READ_H
#define TRACEKIT_READ_H

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
} tk_read_options;

void tk_read_options_init(tk_read_options *o); /* everything kept, no progress */

/* Read PATH into p. Returns 0, or -1 with err naming the file, line:column and the problem; on
 * error the profile must not be presented as complete. */
int tk_read_path(tk_profile *p, const char *path, const tk_read_options *o, tk_error *err);

/* A reader for one format. The registry (lib/read/registry.c) lists them; sniff() sees the first
 * bytes of the (decompressed) input and returns non-zero if it recognises them. */
typedef struct tk_input tk_input;
typedef struct tk_reader {
	const char *name; /* "xctrace", "records" … */
	int (*sniff)(const unsigned char *head, size_t n);
	int (*read)(tk_profile *p, tk_input *in, const tk_read_options *o, tk_error *err);
} tk_reader;

#ifdef __cplusplus
}
#endif
#endif
