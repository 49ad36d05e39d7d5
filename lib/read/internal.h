/* Shared between the xctrace table reader and the toc reader. */
#ifndef TK_READ_INTERNAL_H
#define TK_READ_INTERNAL_H

#include <stdint.h>

#include "tracekit/read.h"

/* Read from in until the XML document starts (xctrace may print diagnostics before `<?xml`).
 * On success *buf (malloc'd, *len bytes) holds what was read, the document starting at *start,
 * and *lines is the number of newlines before it. */
int tk_xctrace_skip_preamble(tk_input *in, char **buf, size_t *len, size_t *start, uint64_t *lines, tk_error *err);

#endif
