/* NOT the Apple SDK: compile-check shim (see README.md). */
#ifndef TK_SHIM_UNISTD_H
#define TK_SHIM_UNISTD_H
#include "_shim_common.h"
pid_t getpid(void);
#endif
