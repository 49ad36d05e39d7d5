/*
 * atos-compatible answers: for each address, the line Apple's atos prints (`function (in Image)
 * (file:line)`, with -i every inlined frame, symbol table only `function (in Image) + offset`, an
 * unknown address echoed), or one JSON object. Addresses read from a stream are looked up in
 * chunks sorted by address (neighbours share cache blocks and inline contexts) and written back in
 * input order straight from the formatting buffer.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "tracekit/symbol.h"
#include "util/mem.h"
#include "util/text.h"

int tk_atos_parse_hex(const char *s, uint64_t *v)
{
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	if (!*s)
		return -1;
	uint64_t x = 0;
	int n = 0;
	for (; *s; s++, n++) {
		unsigned c = (unsigned char)*s, d;
		if (c - '0' < 10)
			d = c - '0';
		else if ((c | 0x20) - 'a' < 6)
			d = (c | 0x20) - 'a' + 10;
		else
			return -1;
		if (n >= 16 && x >> 60)
			return -1; /* overflow */
		x = x << 4 | d;
	}
	*v = x;
	return 0;
}

static const char *base_name(const char *p)
{
	const char *b = strrchr(p, '/');
	return b ? b + 1 : p;
}

/* Output is formatted into a growable buffer: printf per field was a third of the run time. */
typedef struct sbuf {
	char *p;
	size_t n, cap;
} sbuf;

static inline void sb_put(sbuf *b, const char *s, size_t n)
{
	if (__builtin_expect(b->n + n > b->cap, 0)) {
		b->cap = (b->n + n) * 2 + 4096;
		b->p = tk_xrealloc(b->p, b->cap);
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
}
static void sb_str(sbuf *b, const char *s)
{
	sb_put(b, s, strlen(s));
}
static void sb_u64(sbuf *b, uint64_t v)
{
	char t[24];
	int i = 24;
	do
		t[--i] = (char)('0' + v % 10);
	while (v /= 10);
	sb_put(b, t + i, (size_t)(24 - i));
}
static void sb_hex(sbuf *b, uint64_t v)
{
	char t[24];
	int i = 24;
	do
		t[--i] = "0123456789abcdef"[v & 15];
	while (v >>= 4);
	t[--i] = 'x';
	t[--i] = '0';
	sb_put(b, t + i, (size_t)(24 - i));
}

/* the library's one JSON escaper (util/text.h) */
static void json_str(sbuf *o, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	char small[1024], *t = 6 * n + 3 <= sizeof small ? small : tk_xmalloc(6 * n + 3);
	sb_put(o, t, tk_json_quote(t, s ? s : ""));
	if (t != small)
		free(t);
}

typedef struct batch_img {
	char *spec;
	tk_symbol_image *im;
	uint64_t load;
	int has_load;
} batch_img;

struct tk_atos {
	tk_symbolicator *s;
	FILE *out;
	const tk_atos_options *o;
	int failed; /* a write failed: errno saved in werrno, nothing more is written */
	int werrno;
	batch_img *imgs;
	size_t nimgs;
	size_t last;
	tk_symbol_image *im;
	const char *image;
	int mode; /* 0 file addresses, 1 load, 2 slide, 3 offset */
	uint64_t load, slide, vmaddr;
	size_t image_len;
	const char *last_file, *last_base; /* basename memo: consecutive frames share files */
	size_t last_base_len;
	int inl, json;
	int full; /* --full-names: Swift names as swift-demangle prints them */
	size_t unknown;
};
typedef struct tk_atos ctx;

static void warn(ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(ctx *c, const char *fmt, ...)
{
	if (!c->o->warn)
		return;
	char buf[700];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	c->o->warn(c->o->warn_ctx, buf);
}

static int to_file_addr(ctx *c, const char *tok, uint64_t *a, uint64_t *fa)
{
	if (tk_atos_parse_hex(tok, a) < 0)
		return -1;
	*fa = *a;
	if (c->mode == 1)
		*fa = *a - c->load + c->vmaddr;
	else if (c->mode == 2)
		*fa = *a - c->slide;
	else if (c->mode == 3)
		*fa = *a + c->vmaddr;
	return 0;
}

static void one_parsed(ctx *c, const char *tok, int ok, uint64_t a, uint64_t fa, sbuf *o);

static void one(ctx *c, const char *tok, sbuf *o)
{
	uint64_t a = 0, fa = 0;
	int ok = to_file_addr(c, tok, &a, &fa) == 0;
	one_parsed(c, tok, ok, a, fa, o);
}

static void one_parsed(ctx *c, const char *tok, int ok, uint64_t a, uint64_t fa, sbuf *o)
{
	if (!ok) {
		warn(c, "'%s' is not a hex address", tok);
		sb_str(o, tok);
		sb_put(o, "\n", 1);
		c->unknown++;
		return;
	}
	tk_symbol_result r;
	size_t n = tk_symbol_image_lookup(c->im, fa, &r);
	if (n == 1 && !r.frames[0].file && strcmp(r.frames[0].function, "??") == 0)
		n = 0;
	if (!n)
		c->unknown++;
	if (c->json) {
		sb_str(o, "{\"address\":\"");
		sb_hex(o, a);
		sb_str(o, "\",\"file_address\":\"");
		sb_hex(o, fa);
		sb_str(o, "\",\"image\":");
		json_str(o, c->image);
		sb_str(o, ",\"frames\":[");
		for (size_t i = 0; i < n; i++) {
			const tk_symbol_frame *f = &r.frames[i];
			sb_str(o, i ? ",{\"function\":" : "{\"function\":");
			json_str(o, c->full ? f->full_name : f->function);
			sb_str(o, ",\"file\":");
			if (f->file)
				json_str(o, f->file);
			else
				sb_str(o, "null");
			sb_str(o, ",\"line\":");
			sb_u64(o, f->line);
			sb_str(o, f->flags & TK_FRAME_INLINED ? ",\"inlined\":true" : ",\"inlined\":false");
			sb_str(o, f->flags & TK_FRAME_SWIFT ? ",\"swift\":true" : ",\"swift\":false");
			if (r.symtab_only) {
				sb_str(o, ",\"offset\":");
				sb_u64(o, fa - r.symbol_start);
			}
			sb_put(o, "}", 1);
		}
		sb_str(o, "]}\n");
		return;
	}
	if (!n) {
		sb_str(o, tok);
		sb_put(o, "\n", 1);
		return;
	}
	if (r.symtab_only) {
		sb_str(o, c->full ? r.frames[0].full_name : r.frames[0].function);
		sb_str(o, " (in ");
		sb_str(o, c->image);
		sb_str(o, ") + ");
		sb_u64(o, fa - r.symbol_start);
		sb_put(o, "\n", 1);
		return;
	}
	/* atos without -i names the function that owns the code (the outermost frame) with the source
	 * line of the address itself, like llvm-symbolizer --no-inlines */
	size_t from = c->inl ? 0 : n - 1;
	for (size_t i = from; i < n; i++) {
		const tk_symbol_frame *f = &r.frames[i];
		const tk_symbol_frame *loc = c->inl ? f : &r.frames[0];
		sb_str(o, c->full ? f->full_name : f->function);
		sb_put(o, " (in ", 5);
		sb_put(o, c->image, c->image_len);
		if (loc->file) {
			if (loc->file != c->last_file) {
				c->last_file = loc->file;
				c->last_base = base_name(loc->file);
				c->last_base_len = strlen(c->last_base);
			}
			sb_put(o, ") (", 3);
			sb_put(o, c->last_base, c->last_base_len);
			sb_put(o, ":", 1);
			sb_u64(o, loc->line);
			sb_str(o, ")\n");
		} else
			sb_str(o, ")\n");
	}
}

/* Batch mode: select the image named by the first token of a line. */
static int select_image(ctx *c, const char *spec)
{
	if (c->nimgs && strcmp(c->imgs[c->last].spec, spec) == 0)
		goto found;
	for (size_t i = 0; i < c->nimgs; i++)
		if (strcmp(c->imgs[i].spec, spec) == 0) {
			c->last = i;
			goto found;
		}
	{
		char buf[4096];
		snprintf(buf, sizeof buf, "%s", spec);
		batch_img b = {tk_xstrdup(spec), NULL, 0, 0};
		char *at = strrchr(buf, '@');
		if (at) {
			*at = 0;
			if (tk_atos_parse_hex(at + 1, &b.load) < 0) {
				warn(c, "%s: bad load address '%s'", spec, at + 1);
				free(b.spec);
				return -1;
			}
			b.has_load = 1;
		}
		char *colon = strrchr(buf, ':');
		const char *arch = NULL;
		if (colon && !strchr(colon, '/')) {
			*colon = 0;
			arch = colon + 1;
		}
		int is_uuid = strlen(buf) >= 32 && strlen(buf) <= 36 && !strchr(buf, '/');
		tk_error err;
		b.im = tk_symbolicator_image(c->s, is_uuid ? buf : NULL, is_uuid ? NULL : buf, arch, &err);
		if (!b.im)
			warn(c, "%s", err.msg);
		c->imgs = tk_xrealloc(c->imgs, (c->nimgs + 1) * sizeof *c->imgs);
		c->imgs[c->nimgs] = b;
		c->last = c->nimgs++;
	}
found:;
	batch_img *b = &c->imgs[c->last];
	if (!b->im)
		return -1;
	tk_symcache_meta m;
	tk_symbol_image_meta(b->im, &m);
	c->im = b->im;
	c->image = b->im ? tk_symbol_image_name(b->im) : "";
	c->image_len = strlen(c->image);
	c->vmaddr = m.text_vmaddr;
	c->mode = b->has_load ? 1 : 0;
	c->load = b->load;
	return 0;
}

static void batch(ctx *c, FILE *in)
{
	char *line = NULL;
	size_t cap = 0;
	sbuf out = {0};
	while (getline(&line, &cap, in) > 0) {
		char *save = NULL, *t = strtok_r(line, " \t\r\n", &save);
		if (!t)
			continue;
		int ok = select_image(c, t) == 0;
		out.n = 0;
		for (t = strtok_r(NULL, " \t\r\n", &save); t; t = strtok_r(NULL, " \t\r\n", &save)) {
			if (ok)
				one(c, t, &out);
			else {
				sb_str(&out, t);
				sb_put(&out, "\n", 1);
				c->unknown++;
			}
		}
		if (out.n && fwrite(out.p, 1, out.n, c->out) != out.n && !c->failed)
			c->failed = 1, c->werrno = errno;
	}
	free(out.p);
	free(line);
}

/* writev everything, retrying short writes; a closed pipe or full disk stops all output (the
 * caller reports it once). */
static void write_all(ctx *c, struct iovec *iov, size_t n)
{
	while (n && !c->failed) {
		ssize_t w = writev(fileno(c->out), iov, (int)n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			c->failed = 1, c->werrno = errno;
			return;
		}
		while (n && (size_t)w >= iov->iov_len) {
			w -= (ssize_t)iov->iov_len;
			iov++, n--;
		}
		if (n) {
			iov->iov_base = (char *)iov->iov_base + w;
			iov->iov_len -= (size_t)w;
		}
	}
}

typedef struct item {
	uint64_t fa;
	uint32_t idx, ok;
} item;

/* LSD radix sort of items by fa (11-bit digits, skipping digits where all keys agree); the two
 * buffers swap roles each pass. Returns the buffer holding the sorted items. */
static item *sort_items(item *v, item *tmp, size_t n)
{
	uint64_t all_or = 0, all_and = ~(uint64_t)0;
	for (size_t i = 0; i < n; i++)
		all_or |= v[i].fa, all_and &= v[i].fa;
	for (int shift = 0; shift < 64; shift += 11) {
		if ((((all_or ^ all_and) >> shift) & 0x7ff) == 0)
			continue;
		size_t cnt[2048] = {0};
		for (size_t i = 0; i < n; i++)
			cnt[(v[i].fa >> shift) & 0x7ff]++;
		size_t sum = 0;
		for (int d = 0; d < 2048; d++) {
			size_t t = cnt[d];
			cnt[d] = sum;
			sum += t;
		}
		for (size_t i = 0; i < n; i++)
			tmp[cnt[(v[i].fa >> shift) & 0x7ff]++] = v[i];
		item *x = v;
		v = tmp;
		tmp = x;
	}
	return v;
}

/* Addresses are handled in chunks looked up in address order (neighbouring addresses share cache
 * blocks and inline contexts), then printed in input order. */
#define CHUNK 65536

typedef struct chunk {
	char *text; /* the tokens, NUL-separated */
	size_t ntext, captext;
	size_t *tok; /* offsets into text */
	size_t n;
	item *items, *tmp;
	size_t *off, *len;
	uint64_t *addr;
	sbuf out;
} chunk;

static void flush_chunk(ctx *c, chunk *k)
{
	for (size_t i = 0; i < k->n; i++) {
		item *it = &k->items[i];
		it->idx = (uint32_t)i;
		it->ok = to_file_addr(c, k->text + k->tok[i], &k->addr[i], &it->fa) == 0;
		if (!it->ok)
			it->fa = 0;
	}
	const item *sorted = sort_items(k->items, k->tmp, k->n);
	k->out.n = 0;
	for (size_t j = 0; j < k->n; j++) {
		const item *it = &sorted[j];
		size_t i = it->idx, before = k->out.n;
		one_parsed(c, k->text + k->tok[i], (int)it->ok, k->addr[i], it->fa, &k->out);
		k->off[i] = before;
		k->len[i] = k->out.n - before;
	}
	/* back to input order: gather the pieces straight from the buffer (no second copy) */
	if (fflush(c->out) != 0 && !c->failed)
		c->failed = 1, c->werrno = errno;
	struct iovec iov[1024];
	size_t niov = 0;
	for (size_t i = 0; i <= k->n; i++) {
		if (i < k->n && k->len[i]) {
			/* neighbours in the buffer are merged into one piece */
			if (niov && (char *)iov[niov - 1].iov_base + iov[niov - 1].iov_len == k->out.p + k->off[i])
				iov[niov - 1].iov_len += k->len[i];
			else
				iov[niov++] = (struct iovec){k->out.p + k->off[i], k->len[i]};
		}
		if (niov == 1024 || (i == k->n && niov)) {
			write_all(c, iov, niov);
			niov = 0;
		}
	}
	k->n = 0;
	k->ntext = 0;
}

static void tokens(ctx *c, FILE *in)
{
	chunk k = {0};
	k.tok = tk_xmalloc(CHUNK * sizeof *k.tok);
	k.items = tk_xmalloc(CHUNK * sizeof *k.items);
	k.tmp = tk_xmalloc(CHUNK * sizeof *k.tmp);
	k.off = tk_xmalloc(CHUNK * sizeof *k.off);
	k.len = tk_xmalloc(CHUNK * sizeof *k.len);
	k.addr = tk_xmalloc(CHUNK * sizeof *k.addr);
	enum { BUF = 1 << 20 };
	char *buf = tk_xmalloc(BUF);
	size_t have = 0; /* bytes of a token cut by the end of the previous read */
	for (;;) {
		size_t got = c->o->interactive ? (fgets(buf + have, (int)(BUF - have), in) ? strlen(buf + have) : 0)
		                               : fread(buf + have, 1, BUF - have, in);
		int eof = got == 0;
		size_t n = have + got, i = 0;
		for (;;) {
			while (i < n && (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\r' || buf[i] == '\n'))
				i++;
			size_t j = i;
			while (j < n && !(buf[j] == ' ' || buf[j] == '\t' || buf[j] == '\r' || buf[j] == '\n'))
				j++;
			if (j == n && !eof && i < n) {
				/* possibly cut: keep it for the next read (tokens longer than the buffer are split) */
				if (i == 0 && n == BUF)
					j = n;
				else
					break;
			}
			if (i == j)
				break;
			size_t len = j - i;
			if (k.ntext + len + 1 > k.captext) {
				k.captext = (k.ntext + len + 1) * 2 + 65536;
				k.text = tk_xrealloc(k.text, k.captext);
			}
			memcpy(k.text + k.ntext, buf + i, len);
			k.text[k.ntext + len] = 0;
			k.tok[k.n++] = k.ntext;
			k.ntext += len + 1;
			if (k.n == CHUNK)
				flush_chunk(c, &k);
			i = j;
		}
		memmove(buf, buf + i, n - i);
		have = n - i;
		/* an interactive user gets answers line by line */
		if (c->o->interactive)
			flush_chunk(c, &k);
		if (eof || c->failed)
			break;
	}
	free(buf);
	flush_chunk(c, &k);
	free(k.text);
	free(k.tok);
	free(k.items);
	free(k.tmp);
	free(k.off);
	free(k.len);
	free(k.addr);
	free(k.out.p);
}

tk_atos *tk_atos_new(tk_symbolicator *s, tk_symbol_image *im, FILE *out, const tk_atos_options *o)
{
	ctx *c = tk_xcalloc(1, sizeof *c);
	c->s = s;
	c->out = out;
	c->o = o;
	c->mode = (int)o->mode;
	c->load = o->load;
	c->slide = o->slide;
	c->inl = o->inlined;
	c->json = o->json;
	c->full = o->full_names;
	if (im) {
		tk_symcache_meta m;
		tk_symbol_image_meta(im, &m);
		c->im = im;
		c->image = tk_symbol_image_name(im);
		c->image_len = strlen(c->image);
		c->vmaddr = m.text_vmaddr;
	}
	return c;
}

void tk_atos_free(tk_atos *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nimgs; i++)
		free(c->imgs[i].spec);
	free(c->imgs);
	free(c);
}

size_t tk_atos_unknown(const tk_atos *c)
{
	return c->unknown;
}

static int finish(ctx *c, tk_error *err)
{
	if (fflush(c->out) != 0 && !c->failed)
		c->failed = 1, c->werrno = errno;
	if (!c->failed && ferror(c->out))
		c->failed = 1, c->werrno = EIO;
	if (c->failed)
		return tk_error_set(err, "atos: write: %s", strerror(c->werrno));
	return 0;
}

int tk_atos_args(tk_atos *c, char *const *addrs, size_t n, tk_error *err)
{
	if (!c->im)
		return tk_error_set(err, "atos: no image to look addresses up in");
	sbuf out = {0};
	for (size_t i = 0; i < n; i++)
		one(c, addrs[i], &out);
	if (out.n && fwrite(out.p, 1, out.n, c->out) != out.n)
		c->failed = 1, c->werrno = errno;
	free(out.p);
	return finish(c, err);
}

int tk_atos_stream(tk_atos *c, FILE *in, tk_error *err)
{
	if (!c->im)
		return tk_error_set(err, "atos: no image to look addresses up in");
	tokens(c, in);
	return finish(c, err);
}

int tk_atos_batch(tk_atos *c, FILE *in, tk_error *err)
{
	batch(c, in);
	return finish(c, err);
}
