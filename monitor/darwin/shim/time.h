/* NOT the Apple SDK: compile-check shim (see README.md). clockid values as in <time.h> of macOS 10.12+. */
#ifndef TK_SHIM_TIME_H
#define TK_SHIM_TIME_H
#include "_shim_common.h"
struct timespec {
	time_t tv_sec;
	long tv_nsec;
};
typedef enum {
	_CLOCK_REALTIME = 0,
	_CLOCK_MONOTONIC = 6,
	_CLOCK_MONOTONIC_RAW = 4,
	_CLOCK_UPTIME_RAW = 8,
	_CLOCK_PROCESS_CPUTIME_ID = 12,
	_CLOCK_THREAD_CPUTIME_ID = 16
} clockid_t;
#define CLOCK_REALTIME _CLOCK_REALTIME
#define CLOCK_MONOTONIC _CLOCK_MONOTONIC
#define CLOCK_UPTIME_RAW _CLOCK_UPTIME_RAW
#define CLOCK_PROCESS_CPUTIME_ID _CLOCK_PROCESS_CPUTIME_ID
int clock_gettime(clockid_t, struct timespec *);
uint64_t clock_gettime_nsec_np(clockid_t);
#endif
