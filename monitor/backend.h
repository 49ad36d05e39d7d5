/*
 * monitor/backend.h — what the portable monitor core needs from an operating system.
 *
 * Internal to libtracekit-monitor. Implemented by monitor/linux/backend_linux.c and
 * monitor/darwin/backend_darwin.c. Depends on nothing but the C library so the Darwin backend
 * can be compile-checked without an SDK.
 *
 * Threads are named by a 64-bit id: the kernel tid on Linux, the thread_id of
 * THREAD_IDENTIFIER_INFO on Darwin. All calls are made from monitor threads (never from a signal
 * handler) and are serialised by the backend itself, so the core may call them from its CPU
 * thread and its hang watchdog at the same time.
 */
#ifndef TK_MONITOR_BACKEND_H
#define TK_MONITOR_BACKEND_H

#include <stddef.h>
#include <stdint.h>

/* Upper bound on frames per captured stack; the config's max_frames is clamped to it. */
#define TKM_MAX_FRAMES 128

typedef struct tkm_thread_cpu {
	int64_t tid;
	uint64_t cpu_ns; /* cumulative CPU time (user + system) of the thread */
} tkm_thread_cpu;

/* A growable array the backend fills; the caller owns it and frees v. No fixed thread count. */
typedef struct tkm_thread_list {
	tkm_thread_cpu *v;
	size_t n, cap;
} tkm_thread_list;

enum tkm_stack_status {
	TKM_STACK_OK = 0,       /* captured now */
	TKM_STACK_CACHED = 1,   /* thread still blocked in the same system call as at its last capture: reused */
	TKM_STACK_GONE = -1,    /* thread exited */
	TKM_STACK_TIMEOUT = -2, /* thread did not run the capture in time (signal blocked, stopped) */
	TKM_STACK_SELF = -3,    /* the calling thread; not captured */
	TKM_STACK_ERROR = -4,
};

/*
 * Frame convention (the Records contract): frames[0] is the interrupted PC; every later frame is a
 * return address minus one, i.e. an address inside the call instruction, as MTHawkeye stores them,
 * so every stored address symbolizes as-is.
 */
typedef struct tkm_stack {
	int64_t tid;
	int status; /* enum tkm_stack_status */
	int n;
	uintptr_t frames[TKM_MAX_FRAMES];
} tkm_stack;

/* Flags for tkm_capture. */
#define TKM_CAPTURE_REUSE_BLOCKED 1u /* reuse the last stack of a thread still blocked in the same syscall */
#define TKM_CAPTURE_SCAN_BLOCKED 2u  /* Linux: take a blocked thread's stack without a signal if possible */
#define TKM_CAPTURE_GENTLE (TKM_CAPTURE_REUSE_BLOCKED | TKM_CAPTURE_SCAN_BLOCKED)
/* A stack the thread had at some point since the previous capture of it is good enough (the CPU
 * trace's statistical samples): Linux serves it from a perf_event sample when permitted. */
#define TKM_CAPTURE_RECENT 4u

typedef struct tkm_backend_opts {
	int signal;                  /* Linux: real-time signal to use; 0 = first free one from SIGRTMIN+4 */
	uint32_t capture_timeout_ms; /* per-thread capture timeout */
	int use_schedstat; /* Linux: 0 = per-thread CPU clocks (default, measured cheaper), 1 = schedstat descriptors */
	int no_perf;       /* Linux: never use perf_event sampling for TKM_CAPTURE_RECENT */
	uint64_t perf_period_ns; /* Linux: thread CPU time between perf_event samples; 0 = 20 ms */
} tkm_backend_opts;

/* Process-wide, reference-counted: the first acquire installs handlers, the last release removes them.
 * Returns 0, or -1 with a one-line message in err. */
int tkm_backend_acquire(const tkm_backend_opts *opts, char *err, size_t errlen);
void tkm_backend_release(void);

uint64_t tkm_mono_ns(void);        /* monotonic clock, excludes suspend */
double tkm_unix_now(void);         /* wall clock, seconds since 1970 */
uint64_t tkm_process_cpu_ns(void); /* whole-process CPU time, all threads, including exited ones */
int64_t tkm_self_tid(void);
double tkm_process_start_unix(void); /* when the process started; 0 if unknown */

/* Cumulative CPU of every live thread. Returns 0 or -1. */
int tkm_threads_cpu(tkm_thread_list *out);

/* Capture the stacks of tids[0..n) into out[0..n) (sequentially), at most max_frames each.
 * Returns the number captured (OK or CACHED). */
int tkm_capture(const int64_t *tids, size_t n, tkm_stack *out, int max_frames, unsigned flags);

/* Where a thread waits in the kernel: *syscall_nr = the system call it is blocked in, -1 if it is not
 * in one (running), -2 if unknown; wchan = the kernel wait point ("" if unknown). Never fails. */
void tkm_thread_blocked_in(int64_t tid, long *syscall_nr, char *wchan, size_t n);

/* The thread's name (comm) or "" — never fails. */
void tkm_thread_name(int64_t tid, char *buf, size_t n);

/* The loaded images as the images.json document (see docs/records-format.md), malloc'd, or NULL.
 * *generation receives a number that changes when images are loaded or unloaded. */
char *tkm_images_json(uint64_t *generation);
/* Current image generation, cheap. */
uint64_t tkm_images_generation(void);

/* How captures were served since the backend was first acquired (for benchmarks and tests). */
typedef struct tkm_capture_counts {
	uint64_t perf, signal, scan, cached;
	int perf_state; /* 1 = perf_event sampling works, -1 = refused or turned off, 0 = not tried */
} tkm_capture_counts;
void tkm_capture_counts_get(tkm_capture_counts *c);

/* Stop any sampling set up for TKM_CAPTURE_RECENT (the CPU trace left high load). */
void tkm_capture_quiesce(void);

/* The capture signal in use (Linux), 0 when there is none. */
int tkm_backend_signal(void);

/* Name of the unwinding/capture method in use, for reports ("signal+fp", "mach+fp"). */
const char *tkm_backend_describe(void);

#endif
