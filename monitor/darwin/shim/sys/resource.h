/* NOT the Apple SDK: compile-check shim (see README.md). Values as in Darwin's <sys/resource.h>. */
#ifndef TK_SHIM_RESOURCE_H
#define TK_SHIM_RESOURCE_H
#include "../_shim_common.h"
typedef unsigned long long rlim_t;
struct rlimit {
	rlim_t rlim_cur;
	rlim_t rlim_max;
};
#define RLIMIT_NOFILE 8
int getrlimit(int, struct rlimit *);
#endif
