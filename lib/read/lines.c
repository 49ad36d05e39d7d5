/* Line reading for the text readers; see lines.h. */
#include <stdlib.h>
#include <string.h>

#include "read/lines.h"
#include "util/mem.h"

#define CHUNK (256 * 1024)

void tk_lines_init(tk_lines *l, tk_input *in, const tk_read_options *o)
{
	memset(l, 0, sizeof *l);
	l->in = in;
	l->o = o;
	l->cap = CHUNK;
	l->buf = tk_xmalloc(l->cap);
}

void tk_lines_free(tk_lines *l)
{
	free(l->buf);
	l->buf = NULL;
}

int tk_lines_next(tk_lines *l, const char **s, size_t *n, tk_error *err)
{
	for (;;) {
		char *start = l->buf + l->pos;
		char *nl = memchr(start, '\n', l->len - l->pos);
		if (nl || (l->eof && l->pos < l->len)) {
			size_t len = nl ? (size_t)(nl - start) : l->len - l->pos;
			l->pos += len + (nl != NULL);
			l->lineno++;
			if (memchr(start, '\0', len))
				return tk_error_set(err, "%s:%llu: NUL byte: not a text file", tk_input_name(l->in),
				                    (unsigned long long)l->lineno);
			if (len && start[len - 1] == '\r')
				len--;
			*s = start;
			*n = len;
			return 1;
		}
		if (l->eof)
			return 0;
		/* move the partial line to the front, grow if it fills the buffer */
		memmove(l->buf, start, l->len - l->pos);
		l->len -= l->pos;
		l->pos = 0;
		if (l->len == l->cap) {
			l->cap *= 2;
			l->buf = tk_xrealloc(l->buf, l->cap);
		}
		ptrdiff_t got = tk_input_read(l->in, l->buf + l->len, l->cap - l->len, err);
		if (got < 0)
			return -1;
		if (got == 0)
			l->eof = 1;
		l->len += (size_t)got;
		if (l->o && l->o->progress) {
			uint64_t c = tk_input_consumed(l->in);
			if (c - l->progress >= (4u << 20) || got == 0) {
				l->progress = c;
				l->o->progress(l->o->progress_ctx, c, tk_input_total(l->in));
			}
		}
	}
}

size_t tk_head_line(const unsigned char *head, size_t n, size_t at, const char **s)
{
	if (at >= n)
		return 0;
	const char *h = (const char *)head + at;
	const char *nl = memchr(h, '\n', n - at);
	size_t len = nl ? (size_t)(nl - h) : n - at;
	*s = h;
	return len;
}

size_t tk_parse_decimal(const char *s, size_t n, uint64_t *ip, uint64_t *frac9, unsigned *fdigits)
{
	size_t i = 0;
	uint64_t v = 0;
	while (i < n && s[i] >= '0' && s[i] <= '9') {
		if (v > (UINT64_MAX - 9) / 10)
			return 0;
		v = v * 10 + (uint64_t)(s[i] - '0');
		i++;
	}
	if (i == 0)
		return 0;
	uint64_t f = 0;
	unsigned d = 0;
	if (i + 1 < n && s[i] == '.' && s[i + 1] >= '0' && s[i + 1] <= '9') {
		i++;
		while (i < n && s[i] >= '0' && s[i] <= '9') {
			if (d == 9)
				return 0; /* more precision than a nanosecond of a second: not a weight we know */
			f = f * 10 + (uint64_t)(s[i] - '0');
			d++;
			i++;
		}
	}
	for (unsigned k = d; k < 9; k++)
		f *= 10;
	*ip = v;
	*frac9 = f;
	*fdigits = d;
	return i;
}
