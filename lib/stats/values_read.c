/* Files of plain numbers, one per line, into a value set. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tracekit/read.h"
#include "tracekit/stats.h"

/* Exact powers of ten as doubles (10^22 is the largest exactly representable). */
static const double pow10_exact[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                       1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* Parse a decimal number in [s, e). Clinger's fast path: with a mantissa below 2^53 and a power of
 * ten up to 22, m / 10^k (or m · 10^k) is one correctly rounded IEEE operation on exact operands,
 * so it equals strtod's result; anything else goes to strtod. Returns 0 or -1 if not a number. */
static int parse_num(const char *s, const char *e, double *out)
{
	const char *p = s;
	int neg = 0;
	if (p < e && (*p == '-' || *p == '+'))
		neg = *p++ == '-';
	uint64_t m = 0;
	int digits = 0, frac = 0, any = 0;
	while (p < e && *p >= '0' && *p <= '9') {
		if (digits < 19)
			m = m * 10 + (uint64_t)(*p - '0'), digits += m != 0;
		else
			goto slow;
		p++, any = 1;
	}
	if (p < e && *p == '.') {
		p++;
		while (p < e && *p >= '0' && *p <= '9') {
			if (digits < 19)
				m = m * 10 + (uint64_t)(*p - '0'), digits += m != 0, frac++;
			else
				goto slow;
			p++, any = 1;
		}
	}
	if (!any)
		goto slow;
	int ex = 0;
	if (p < e && (*p == 'e' || *p == 'E')) {
		p++;
		int eneg = 0, ed = 0;
		if (p < e && (*p == '-' || *p == '+'))
			eneg = *p++ == '-';
		while (p < e && *p >= '0' && *p <= '9' && ed < 5)
			ex = ex * 10 + (*p++ - '0'), ed++;
		if (!ed)
			return -1;
		if (eneg)
			ex = -ex;
	}
	if (p != e)
		goto slow;
	ex -= frac;
	if (m < (1ull << 53) && ex >= -22 && ex <= 22) {
		double d = (double)m;
		d = ex < 0 ? d / pow10_exact[-ex] : d * pow10_exact[ex];
		*out = neg ? -d : d;
		return 0;
	}
slow:;
	char buf[128];
	size_t n = (size_t)(e - s);
	if (n >= sizeof buf)
		return -1;
	memcpy(buf, s, n);
	buf[n] = 0;
	char *end;
	errno = 0;
	*out = strtod(buf, &end);
	if (end != buf + n || n == 0 || !isfinite(*out))
		return -1;
	return 0;
}

int64_t tk_values_read(tk_values *v, const char *path, void (*progress)(void *, uint64_t, uint64_t), void *ctx,
                       tk_error *err)
{
	tk_input *in = tk_input_open(path, err);
	if (!in)
		return -1;
	int64_t r = tk_values_read_input(v, in, progress, ctx, err);
	tk_input_close(in);
	return r;
}

int64_t tk_values_read_input(tk_values *v, tk_input *in, void (*progress)(void *, uint64_t, uint64_t), void *ctx,
                             tk_error *err)
{
	const char *name = tk_input_name(in);
	size_t cap = 1 << 20, len = 0;
	char *buf = malloc(cap + 1);
	int64_t count = 0;
	uint64_t line = 0;
	unsigned tick = 0;
	if (!buf)
		return tk_error_set(err, "%s: out of memory", name);
	for (;;) {
		ptrdiff_t r = tk_input_read(in, buf + len, cap - len, err);
		if (r < 0)
			goto fail;
		len += (size_t)r;
		int eof = r == 0;
		if (eof && len > 0 && buf[len - 1] != '\n')
			buf[len++] = '\n'; /* the last line needs no newline (cap + 1 leaves room) */
		char *p = buf, *end = buf + len, *nl;
		while (p < end && (nl = memchr(p, '\n', (size_t)(end - p)))) {
			line++;
			char *s = p, *e = nl;
			while (s < e && (*s == ' ' || *s == '\t'))
				s++;
			while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
				e--;
			if (s < e && *s != '#') {
				double d;
				tk_error e2;
				if (parse_num(s, e, &d) < 0) {
					int n = (int)(e - s) > 40 ? 40 : (int)(e - s);
					tk_error_set(err, "%s:%llu: '%.*s%s' is not a finite number", name,
					             (unsigned long long)line, n, s, e - s > 40 ? "…" : "");
					goto fail;
				}
				if (tk_values_add(v, d, &e2) < 0) {
					tk_error_set(err, "%s:%llu: %s", name, (unsigned long long)line, e2.msg);
					goto fail;
				}
				count++;
			}
			p = nl + 1;
		}
		len = (size_t)(end - p);
		if (len == cap) {
			tk_error_set(err, "%s:%llu: line longer than %zu bytes", name, (unsigned long long)line + 1,
			             cap);
			goto fail;
		}
		memmove(buf, p, len);
		if (progress && (++tick & 15) == 0)
			progress(ctx, tk_input_consumed(in), tk_input_total(in));
		if (eof)
			break;
	}
	free(buf);
	return count;
fail:
	free(buf);
	return -1;
}
