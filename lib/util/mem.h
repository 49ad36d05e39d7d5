/*
 * Allocation that cannot fail quietly. Running out of memory is the one condition the library
 * does not turn into a tk_error: every caller would have to unwind half-built models for a case
 * that, on the machines we target, means the process is already lost. We abort with a message.
 */
#ifndef TK_UTIL_MEM_H
#define TK_UTIL_MEM_H

#include <stddef.h>

void *tk_xmalloc(size_t n);
void *tk_xcalloc(size_t n, size_t size);
void *tk_xrealloc(void *p, size_t n);
char *tk_xstrdup(const char *s);
char *tk_xstrndup(const char *s, size_t n);

/* Grow a dynamic array: ensures capacity for at least need elements of size sz. */
void tk_grow(void **p, size_t *cap, size_t need, size_t sz);
#define TK_GROW(ptr, cap, need) tk_grow((void **)&(ptr), &(cap), (need), sizeof *(ptr))

#endif
