/* A line reader over a tk_input for the text readers (Deep Copy, `sample`, folded, `perf script`).
 * Lines are handed out without their "\n" (and without a "\r" before it); the last line may lack
 * its newline. Memory is one chunk plus the longest line. A file that starts with a byte-order mark
 * is decoded: UTF-16 LE or BE (what PowerShell's `>` and Windows editors write) becomes UTF-8, and a
 * UTF-8 mark is dropped, so the readers only ever see UTF-8. */
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
	/* byte-order mark: TK_TEXT_UTF8 (none, or a UTF-8 one), TK_TEXT_UTF16LE or TK_TEXT_UTF16BE */
	int enc;
	size_t skip;           /* BOM bytes still to drop from the stream */
	unsigned char pend[2]; /* a UTF-16 code unit cut by a read */
	size_t npend;
	uint32_t high;      /* a high surrogate waiting for its low half (0: none) */
	unsigned char *raw; /* UTF-16 bytes before decoding */
} tk_lines;

enum { TK_TEXT_UTF8 = 0, TK_TEXT_UTF16LE = 1, TK_TEXT_UTF16BE = 2 };

void tk_lines_init(tk_lines *l, tk_input *in, const tk_read_options *o);
void tk_lines_free(tk_lines *l);
/* The next line in *s (*n bytes, not NUL-terminated, valid until the next call). Returns 1, 0 at
 * the end, or -1 with err set (I/O, gzip, or a NUL byte: these are text formats). */
int tk_lines_next(tk_lines *l, const char **s, size_t *n, tk_error *err);

/* The encoding the first bytes announce (TK_TEXT_*) and the length of the mark (0 if none). */
int tk_text_bom(const unsigned char *head, size_t n, size_t *bom_len);
/* The sniffers see UTF-8: decode a UTF-16 head (after its mark) into out (cap bytes); returns the
 * bytes written. A code unit or pair cut by the head's end is left out. */
size_t tk_text_head_utf8(const unsigned char *head, size_t n, int enc, unsigned char *out, size_t cap);

/* Helpers shared by the text readers. */
/* The first line of head (up to n bytes) and the one after it; returns 0 if there is none. */
size_t tk_head_line(const unsigned char *head, size_t n, size_t at, const char **s);
/* "12.345" → *ip and up to 9 fraction digits scaled to *frac (×10^-9), *fdigits = digits given.
 * Returns the bytes consumed (0 if no digit, or the integer part overflows). */
size_t tk_parse_decimal(const char *s, size_t n, uint64_t *ip, uint64_t *frac9, unsigned *fdigits);

#endif
