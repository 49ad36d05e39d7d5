/* NOT the Apple SDK: compile-check shim (see README.md). */
#ifndef TK_SHIM_STDIO_H
#define TK_SHIM_STDIO_H
#include "_shim_common.h"
#include <stdarg.h>
typedef struct __sFILE FILE;
extern FILE *__stderrp;
#define stderr __stderrp
int snprintf(char *, size_t, const char *, ...) __attribute__((format(printf, 3, 4)));
int vsnprintf(char *, size_t, const char *, va_list) __attribute__((format(printf, 3, 0)));
int fprintf(FILE *, const char *, ...) __attribute__((format(printf, 2, 3)));
int rename(const char *, const char *);
#endif
