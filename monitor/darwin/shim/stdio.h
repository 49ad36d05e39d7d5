/* NOT the Apple SDK: compile-check shim (see README.md). */
#ifndef TK_SHIM_STDIO_H
#define TK_SHIM_STDIO_H
#include "_shim_common.h"
#include <stdarg.h>
int snprintf(char *, size_t, const char *, ...) __attribute__((format(printf, 3, 4)));
int vsnprintf(char *, size_t, const char *, va_list) __attribute__((format(printf, 3, 0)));
#endif
