/* NOT the Apple SDK: compile-check shim (see README.md). Common scalar types. */
#ifndef TK_SHIM_COMMON_H
#define TK_SHIM_COMMON_H
#include <stddef.h>
#include <stdint.h>
typedef long ssize_t;
typedef int pid_t;
typedef long time_t;
typedef unsigned int mode_t;
typedef long long off_t;
typedef int dev_t;
typedef unsigned long long ino_t;
#endif
