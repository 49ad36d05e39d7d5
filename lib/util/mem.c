#include "util/mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void oom(size_t n)
{
	fprintf(stderr, "tracekit: out of memory allocating %zu bytes\n", n);
	abort();
}

void *tk_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom(n);
	return p;
}

void *tk_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		oom(n * size);
	return p;
}

void *tk_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		oom(n);
	return q;
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
	size_t nc = *cap ? *cap : 16;
	while (nc < need)
		nc *= 2;
	*p = tk_xrealloc(*p, nc * sz);
	*cap = nc;
}
