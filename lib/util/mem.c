#include "util/mem.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "tracekit/error.h"

static _Thread_local tk_oom_guard *guard;
static _Thread_local size_t fail_countdown; /* tk_mem_fail_after: 0 = off */
static tk_oom_handler handler;              /* set once at start-up by the program */

void tk_set_oom_handler(tk_oom_handler h)
{
	handler = h;
}

void tk_oom_guard_push(tk_oom_guard *g)
{
	g->prev = guard;
	g->bytes = 0;
	guard = g;
}

void tk_oom_guard_pop(tk_oom_guard *g)
{
	guard = g->prev;
}

int tk_oom_run(int (*fn)(void *ctx), void *ctx, size_t *bytes)
{
	tk_oom_guard g;
	tk_oom_guard_push(&g);
	if (setjmp(g.jump)) {
		*bytes = g.bytes; /* oom() has popped the guard already */
		return TK_OOM;
	}
	int rc = fn(ctx);
	tk_oom_guard_pop(&g);
	return rc;
}

void tk_mem_fail_after(size_t n)
{
	fail_countdown = n ? n + 1 : 0;
}

/* The request of n bytes failed: back to the innermost guard, else the program's handler. */
static void oom(size_t n)
{
	tk_oom_guard *g = guard;
	if (g) {
		guard = g->prev; /* the guard is spent: a failure in its handler goes further out */
		fail_countdown = 0;
		g->bytes = n;
		longjmp(g->jump, 1);
	}
	if (handler)
		handler(n);
	abort();
}

static int should_fail(void)
{
	return fail_countdown && --fail_countdown == 0;
}

void *tk_xmalloc(size_t n)
{
	void *p = should_fail() ? NULL : malloc(n ? n : 1);
	if (!p)
		oom(n);
	return p;
}

void *tk_xcalloc(size_t n, size_t size)
{
	void *p = should_fail() ? NULL : calloc(n ? n : 1, size ? size : 1);
	if (!p)
		oom(n * size);
	return p;
}

void *tk_xrealloc(void *p, size_t n)
{
	void *q = should_fail() ? NULL : realloc(p, n ? n : 1);
	if (!q)
		oom(n);
	return q;
}

void *tk_xmalloc_big(size_t n)
{
	enum { HUGE = 2u << 20 };
	if (n < HUGE / 2)
		return tk_xmalloc(n);
	size_t len = (n + HUGE - 1) & ~(size_t)(HUGE - 1);
	void *p = NULL;
	if (len < n || should_fail() || posix_memalign(&p, HUGE, len) != 0)
		oom(n);
#ifdef MADV_HUGEPAGE
	(void)madvise(p, len, MADV_HUGEPAGE); /* a hint: refused (no THP) changes nothing */
#endif
	return p;
}

/* The capacity a growing array doubles to for need elements. */
static size_t grown(size_t cap, size_t need)
{
	size_t nc = cap ? cap : 16;
	while (nc < need)
		nc *= 2;
	return nc;
}

void tk_grow_big(void **p, size_t *cap, size_t need, size_t sz)
{
	if (need <= *cap)
		return;
	size_t nc = grown(*cap, need);
	void *q = tk_xmalloc_big(nc * sz);
	if (*cap)
		memcpy(q, *p, *cap * sz);
	free(*p);
	*p = q;
	*cap = nc;
}

char *tk_xstrdup(const char *s)
{
	return tk_xstrndup(s, strlen(s));
}

char *tk_xstrndup(const char *s, size_t n)
{
	char *d = tk_xmalloc(n + 1);
	memcpy(d, s, n);
	d[n] = 0;
	return d;
}

void tk_grow(void **p, size_t *cap, size_t need, size_t sz)
{
	if (need <= *cap)
		return;
	size_t nc = grown(*cap, need);
	*p = tk_xrealloc(*p, nc * sz);
	*cap = nc;
}
