/* NOT the Apple SDK: compile-check shim (see README.md). */
#ifndef TK_SHIM_SIGNAL_H
#define TK_SHIM_SIGNAL_H
#include "_shim_common.h"
int kill(pid_t, int);
#endif
