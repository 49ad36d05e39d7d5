/* Shared between the xctrace table reader and the toc reader. */
#ifndef TK_READ_INTERNAL_H
#define TK_READ_INTERNAL_H

#include <stdint.h>

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

#endif
