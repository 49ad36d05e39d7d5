/* NOT the Apple SDK: compile-check shim (see README.md). */
#ifndef TK_SHIM_STDLIB_H
#define TK_SHIM_STDLIB_H
#include "_shim_common.h"
void *malloc(size_t);
void *calloc(size_t, size_t);
void *realloc(void *, size_t);
void free(void *);
void qsort(void *, size_t, size_t, int (*)(const void *, const void *));
char *getenv(const char *);
unsigned long long strtoull(const char *, char **, int);
long strtol(const char *, char **, int);
double strtod(const char *, char **);
#endif
