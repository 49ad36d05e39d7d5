/* NOT the Apple SDK: compile-check shim (see README.md). Opaque layouts are placeholders. */
#ifndef TK_SHIM_PTHREAD_H
#define TK_SHIM_PTHREAD_H
#include "_shim_common.h"
#include <mach/mach.h>
#include <time.h>
typedef struct _opaque_pthread_t *pthread_t;
typedef struct {
	long __sig;
	char __opaque[56];
} pthread_mutex_t;
typedef struct {
	long __sig;
	char __opaque[8];
} pthread_mutexattr_t;
typedef struct {
	long __sig;
	char __opaque[40];
} pthread_cond_t;
typedef struct {
	long __sig;
	char __opaque[8];
} pthread_condattr_t;
typedef struct {
	long __sig;
	char __opaque[56];
} pthread_attr_t;
#define PTHREAD_MUTEX_INITIALIZER                                                                                      \
	{                                                                                                              \
		0x32AAABA7,                                                                                            \
		{                                                                                                      \
			0                                                                                              \
		}                                                                                                      \
	}
int pthread_mutex_init(pthread_mutex_t *, const pthread_mutexattr_t *);
int pthread_mutex_destroy(pthread_mutex_t *);
int pthread_mutex_lock(pthread_mutex_t *);
int pthread_mutex_unlock(pthread_mutex_t *);
int pthread_cond_init(pthread_cond_t *, const pthread_condattr_t *);
int pthread_cond_destroy(pthread_cond_t *);
int pthread_cond_broadcast(pthread_cond_t *);
int pthread_cond_timedwait(pthread_cond_t *, pthread_mutex_t *, const struct timespec *);
int pthread_cond_timedwait_relative_np(pthread_cond_t *, pthread_mutex_t *, const struct timespec *);
int pthread_create(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
int pthread_join(pthread_t, void **);
int pthread_setname_np(const char *);
/* pthread_once_t as Darwin's: a signature word and 8 opaque bytes (_PTHREAD_ONCE_SIG_init 0x30B1BCBA) */
typedef struct {
	long __sig;
	char __opaque[8];
} pthread_once_t;
#define PTHREAD_ONCE_INIT {0x30B1BCBA, {0}}
int pthread_once(pthread_once_t *, void (*)(void));
int pthread_atfork(void (*)(void), void (*)(void), void (*)(void));
int pthread_threadid_np(pthread_t, uint64_t *);
pthread_t pthread_from_mach_thread_np(mach_port_t);
void *pthread_get_stackaddr_np(pthread_t);
size_t pthread_get_stacksize_np(pthread_t);
#endif
