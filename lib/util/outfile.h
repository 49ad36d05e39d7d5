/*
 * Output files that appear whole or not at all. A writer that fails half-way (full disk, killed
 * process, bad input found late) must never leave a truncated OUT behind, and OUT may be the very
 * file being read (`tracekit symbolicate x.xml -o x.xml`). So output goes to a temporary file
 * beside OUT (same directory, hence same filesystem, so rename(2) is atomic) created with
 * O_EXCL (PATH.tmp.XXXXXX, never an existing file or a symlink's target), and is renamed over
 * OUT only on success.
 *
 *   tk_outfile o;
 *   if (tk_outfile_open(&o, path, &err) < 0) ...     // path NULL or "-" = standard output
 *   ... write to o.f ...
 *   if (tk_outfile_commit(&o, &err) < 0) ...         // flush, check, fsync, rename; or
 *   tk_outfile_abort(&o);                            // on any failure: remove the temporary
 *
 * Internal (not installed).
 */
#ifndef TK_UTIL_OUTFILE_H
#define TK_UTIL_OUTFILE_H

#include <stdio.h>

#include "tracekit/error.h"

typedef struct tk_outfile {
	FILE *f;    /* where to write */
	char *path; /* final path; NULL for standard output */
	char *tmp;  /* temporary path beside it; NULL for standard output */
	int nosync; /* set after open: commit renames without an fsync of its own; the caller
	             * makes the batch durable once (syncfs) before it reports success */
} tk_outfile;

int tk_outfile_open(tk_outfile *o, const char *path, tk_error *err);
/* Flush and check the stream; for a file, fsync, close and rename over path. Returns 0, or -1 with
 * err (the temporary is removed and path untouched). Always releases o. */
int tk_outfile_commit(tk_outfile *o, tk_error *err);
/* Drop the output: close and remove the temporary (standard output is only flushed). */
void tk_outfile_abort(tk_outfile *o);

#endif
