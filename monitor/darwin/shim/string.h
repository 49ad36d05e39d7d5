/* NOT the Apple SDK: compile-check shim (see README.md). */
#ifndef TK_SHIM_STRING_H
#define TK_SHIM_STRING_H
#include "_shim_common.h"
void *memcpy(void *, const void *, size_t);
void *memmove(void *, const void *, size_t);
void *memchr(const void *, int, size_t);
void *memset(void *, int, size_t);
int memcmp(const void *, const void *, size_t);
size_t strlen(const char *);
int strcmp(const char *, const char *);
char *strchr(const char *, int);
char *strdup(const char *);
char *strerror(int);
#endif
