/* NOT the Apple SDK: compile-check shim (see README.md). sigset_t and SIG_SETMASK as in Darwin's
 * <sys/signal.h>. */
#ifndef TK_SHIM_SIGNAL_H
#define TK_SHIM_SIGNAL_H
#include "_shim_common.h"
typedef unsigned int sigset_t;
#define SIG_SETMASK 3
int kill(pid_t, int);
int sigfillset(sigset_t *);
int pthread_sigmask(int, const sigset_t *, sigset_t *);
#endif
