/* A line reader over a tk_input for the text readers (Deep Copy, `sample`, folded, `perf script`).
 * Lines are handed out without their "\n" (and without a "\r" before it); the last line may lack
 * its newline. Memory is one chunk plus the longest line. */
#ifndef TK_READ_LINES_H
#define TK_READ_LINES_H

#include <stddef.h>
#include <stdint.h>

#include "tracekit/read.h"

typedef struct tk_lines {
	tk_input *in;
	char *buf;
	size_t cap, len, pos; /* buf[pos, len) is not yet handed out */
	int eof;
	uint64_t lineno;   /* number of the line last returned (1-based) */
	uint64_t progress; /* bytes consumed at the last progress call */
	const tk_read_options *o;
} tk_lines;

void tk_lines_init(tk_lines *l, tk_input *in, const tk_read_options *o);
void tk_lines_free(tk_lines *l);
/* The next line in *s (*n bytes, not NUL-terminated, valid until the next call). Returns 1, 0 at
 * the end, or -1 with err set (I/O, gzip, or a NUL byte: these are text formats). */
int tk_lines_next(tk_lines *l, const char **s, size_t *n, tk_error *err);

/* Helpers shared by the text readers. */
/* The first line of head (up to n bytes) and the one after it; returns 0 if there is none. */
size_t tk_head_line(const unsigned char *head, size_t n, size_t at, const char **s);
/* "12.345" → *ip and up to 9 fraction digits scaled to *frac (×10^-9), *fdigits = digits given.
 * Returns the bytes consumed (0 if no digit, or the integer part overflows). */
size_t tk_parse_decimal(const char *s, size_t n, uint64_t *ip, uint64_t *frac9, unsigned *fdigits);

#endif
