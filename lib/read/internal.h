/* Shared between readers (lib/read/): the xctrace table and toc readers' preamble, the mapped input,
 * and the metadata the text-profile readers end with. */
#ifndef TK_READ_INTERNAL_H
#define TK_READ_INTERNAL_H

#include <stdint.h>

#include "tracekit/profile.h"
#include "tracekit/read.h"

/* Read from in until the XML document starts (xctrace may print diagnostics before `<?xml`).
 * On success *buf (malloc'd, *len bytes) holds what was read, the document starting at *start,
 * and *lines is the number of newlines before it. */
int tk_xctrace_skip_preamble(tk_input *in, char **buf, size_t *len, size_t *start, uint64_t *lines, tk_error *err);

/* The whole of a plain (not gzip'd) regular file opened by path, mapped read-only, while nothing but
 * the sniff head has been read: the bytes tk_input_read would give, without copying them (the MetricKit
 * reader's one big payload). The stream is then at its end. NULL otherwise (standard input, memory,
 * gzip, a file whose size changed). Unmap with munmap(p, *n). (lib/read/input.c) */
const char *tk_input_map(tk_input *in, size_t *n);

/* Meta "event": the event read, marked as chosen by --event (asked non-NULL) or as the first of
 * nevents when the file has more than one. (lib/read/meta.c) */
void tk_read_meta_event(tk_profile *p, const char *name, size_t nevents, const char *asked);

/* Meta "rows": rows (samples, keys, nodes) in the input, and "rows-read" when only kept of them were
 * read (another event's samples skipped). Pass kept = rows when all were read. */
void tk_read_meta_rows(tk_profile *p, uint64_t rows, uint64_t kept);

#endif
