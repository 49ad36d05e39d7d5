/* NOT the Apple SDK: compile-check shim (see README.md). Opaque layouts are placeholders. */
#ifndef TK_SHIM_PTHREAD_H
#define TK_SHIM_PTHREAD_H
#include "_shim_common.h"
#include <mach/mach.h>
typedef struct _opaque_pthread_t *pthread_t;
typedef struct {
	long __sig;
	char __opaque[56];
} pthread_mutex_t;
#define PTHREAD_MUTEX_INITIALIZER {0x32AAABA7, {0}}
int pthread_mutex_lock(pthread_mutex_t *);
int pthread_mutex_unlock(pthread_mutex_t *);
int pthread_threadid_np(pthread_t, uint64_t *);
pthread_t pthread_from_mach_thread_np(mach_port_t);
void *pthread_get_stackaddr_np(pthread_t);
size_t pthread_get_stacksize_np(pthread_t);
#endif
