/*
 * Darwin (iOS, macOS) backend of libtracekit-monitor, written against the documented Mach APIs.
 *
 * COMPILE-CHECKED, NOT RUN: this repository builds and tests on Linux; `make monitor-darwin-check`
 * compiles this file with clang for arm64-apple-ios, arm64e-apple-ios and x86_64-apple-macos
 * against the declarations shim in monitor/darwin/shim/ (there is no Apple SDK here).
 *
 * Per-thread CPU: task_threads + thread_info(THREAD_BASIC_INFO) user_time + system_time
 * (cumulative, like Linux schedstat, so the core's delta arithmetic is the same), idle threads
 * skipped; every thread port is released with mach_port_deallocate and the array with
 * vm_deallocate (MTHawkeye leaked the ports); the list is sized by the kernel, no fixed buffer.
 *
 * Stacks: for each requested thread, everything the walk needs (its stack bounds via pthread, the
 * executable ranges of the loaded images via dyld) is gathered first; then thread_suspend,
 * thread_get_state, a frame-pointer walk reading memory only with vm_read_overwrite (a bad
 * pointer is an error, not a crash), thread_resume. No lock is taken and nothing is allocated
 * while a thread is suspended (dyld, malloc and pthread locks may be held by it: sentry-cocoa
 * #4056). Return addresses are PAC-stripped with ptrauth_strip where available, otherwise masked
 * to the user address space of the platform (iOS 36-bit vs macOS 47-bit; plcrashreporter #316).
 */
#include <mach-o/dyld.h>
#include <mach-o/loader.h>
#include <mach/mach.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#if defined(__has_include)
#if __has_include(<ptrauth.h>) && defined(__arm64e__)
#include <ptrauth.h>
#define TKM_HAVE_PTRAUTH 1
#endif
#endif

#include "../backend.h"

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_refs;

typedef struct xrange {
	uintptr_t lo, hi;
	uint32_t image;
} xrange;

/* ---------- pointer authentication ---------- */

static uintptr_t strip(uintptr_t p)
{
#if defined(TKM_HAVE_PTRAUTH)
	return (uintptr_t)ptrauth_strip((void *)p, ptrauth_key_return_address);
#elif defined(__arm64__) || defined(__aarch64__)
	/* arm64 code running on arm64e hardware still sees signed return addresses: mask to the
	 * user address space, which is 36 bits on iOS (MACH_VM_MAX_ADDRESS 0x0000000FC0000000) but
	 * 47 bits on macOS (0x00007FFFFE000000). */
#if defined(TARGET_OS_OSX) && TARGET_OS_OSX
	return p & 0x00007FFFFFFFFFFFull;
#elif defined(__ENVIRONMENT_MAC_OS_X_VERSION_MIN_REQUIRED__)
	return p & 0x00007FFFFFFFFFFFull;
#else
	return p & 0x0000000FFFFFFFFFull;
#endif
#else
	return p;
#endif
}

/* ---------- clocks ---------- */

uint64_t tkm_mono_ns(void)
{
	return clock_gettime_nsec_np(CLOCK_UPTIME_RAW); /* stops while the device sleeps, as a hang should */
}

double tkm_unix_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

uint64_t tkm_process_cpu_ns(void)
{
	return clock_gettime_nsec_np(CLOCK_PROCESS_CPUTIME_ID);
}

int64_t tkm_self_tid(void)
{
	uint64_t id = 0;
	pthread_threadid_np(NULL, &id);
	return (int64_t)id;
}

double tkm_process_start_unix(void)
{
	return 0; /* the core then uses the monitor's start; sysctl(KERN_PROC_PID) would give p_starttime */
}

int tkm_backend_acquire(const tkm_backend_opts *opts, char *err, size_t errlen)
{
	(void)opts;
	(void)err;
	(void)errlen;
	pthread_mutex_lock(&g_lock);
	g_refs++;
	pthread_mutex_unlock(&g_lock);
	return 0;
}

void tkm_backend_release(void)
{
	pthread_mutex_lock(&g_lock);
	if (g_refs > 0)
		g_refs--;
	pthread_mutex_unlock(&g_lock);
}

int tkm_backend_signal(void)
{
	return 0; /* thread_suspend, no signal */
}

void tkm_capture_counts_get(tkm_capture_counts *c)
{
	*c = (tkm_capture_counts){0}; /* not counted on Darwin: every capture suspends the thread */
}

void tkm_capture_quiesce(void)
{
	/* TKM_CAPTURE_RECENT sets nothing up here: a capture is one suspend/resume */
}

const char *tkm_backend_describe(void)
{
	return "darwin: thread_info, thread_suspend + frame-pointer walk";
}

/* ---------- threads ---------- */

typedef struct port_list {
	thread_act_array_t ports;
	mach_msg_type_number_t n;
	uint64_t *ids;
} port_list;

static int ports_get(port_list *pl)
{
	pl->ports = NULL;
	pl->n = 0;
	pl->ids = NULL;
	if (task_threads(mach_task_self(), &pl->ports, &pl->n) != KERN_SUCCESS)
		return -1;
	pl->ids = malloc((pl->n ? pl->n : 1) * sizeof *pl->ids);
	for (mach_msg_type_number_t i = 0; i < pl->n; i++) {
		thread_identifier_info_data_t info;
		mach_msg_type_number_t cnt = THREAD_IDENTIFIER_INFO_COUNT;
		uint64_t id = 0;
		if (thread_info(pl->ports[i], THREAD_IDENTIFIER_INFO, (thread_info_t)&info, &cnt) == KERN_SUCCESS)
			id = info.thread_id;
		if (pl->ids)
			pl->ids[i] = id;
	}
	return pl->ids ? 0 : -1;
}

static void ports_put(port_list *pl)
{
	for (mach_msg_type_number_t i = 0; i < pl->n; i++)
		mach_port_deallocate(mach_task_self(), pl->ports[i]);
	if (pl->ports)
		vm_deallocate(mach_task_self(), (vm_address_t)pl->ports, pl->n * sizeof(thread_act_t));
	free(pl->ids);
	pl->ports = NULL;
	pl->ids = NULL;
	pl->n = 0;
}

static int cpu_cmp(const void *a, const void *b)
{
	const tkm_thread_cpu *x = a, *y = b;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

int tkm_threads_cpu(tkm_thread_list *out)
{
	port_list pl;
	out->n = 0;
	if (ports_get(&pl) != 0) {
		ports_put(&pl);
		return -1;
	}
	if (out->cap < pl.n) {
		tkm_thread_cpu *v = realloc(out->v, pl.n * sizeof *v);
		if (!v) {
			ports_put(&pl);
			return -1;
		}
		out->v = v;
		out->cap = pl.n;
	}
	for (mach_msg_type_number_t i = 0; i < pl.n; i++) {
		thread_basic_info_data_t bi;
		mach_msg_type_number_t cnt = THREAD_BASIC_INFO_COUNT;
		if (thread_info(pl.ports[i], THREAD_BASIC_INFO, (thread_info_t)&bi, &cnt) != KERN_SUCCESS)
			continue;
		if (bi.flags & TH_FLAGS_IDLE)
			continue;
		uint64_t us = (uint64_t)bi.user_time.seconds * 1000000u + (uint64_t)bi.user_time.microseconds +
		              (uint64_t)bi.system_time.seconds * 1000000u + (uint64_t)bi.system_time.microseconds;
		out->v[out->n++] = (tkm_thread_cpu){(int64_t)pl.ids[i], us * 1000u};
	}
	ports_put(&pl);
	qsort(out->v, out->n, sizeof *out->v, cpu_cmp);
	return 0;
}

void tkm_thread_blocked_in(int64_t tid, long *syscall_nr, char *wchan, size_t n)
{
	(void)tid;
	*syscall_nr = -2; /* Mach does not say; the stack's top frame (e.g. mach_msg2_trap) does */
	if (n)
		wchan[0] = 0;
}

void tkm_thread_name(int64_t tid, char *buf, size_t n)
{
	port_list pl;
	if (!n)
		return;
	buf[0] = 0;
	if (ports_get(&pl) == 0)
		for (mach_msg_type_number_t i = 0; i < pl.n; i++) {
			if ((int64_t)pl.ids[i] != tid)
				continue;
			thread_extended_info_data_t xi;
			mach_msg_type_number_t cnt = THREAD_EXTENDED_INFO_COUNT;
			if (thread_info(pl.ports[i], THREAD_EXTENDED_INFO, (thread_info_t)&xi, &cnt) == KERN_SUCCESS)
				snprintf(buf, n, "%.*s", (int)sizeof xi.pth_name, xi.pth_name);
			break;
		}
	ports_put(&pl);
}

/* ---------- images ---------- */

/* Executable ranges of every loaded image, gathered before any thread is suspended (dyld locks). */
static xrange *exec_ranges(size_t *count)
{
	uint32_t n = _dyld_image_count();
	size_t cap = (size_t)n * 2 + 1, k = 0;
	xrange *r = malloc(cap * sizeof *r);
	if (!r)
		return NULL;
	for (uint32_t i = 0; i < n; i++) {
		const struct mach_header_64 *h = (const struct mach_header_64 *)_dyld_get_image_header(i);
		if (!h || h->magic != MH_MAGIC_64)
			continue;
		intptr_t slide = _dyld_get_image_vmaddr_slide(i);
		const uint8_t *p = (const uint8_t *)(h + 1);
		for (uint32_t c = 0; c < h->ncmds; c++) {
			const struct load_command *lc = (const struct load_command *)p;
			if (lc->cmd == LC_SEGMENT_64) {
				const struct segment_command_64 *sg = (const struct segment_command_64 *)p;
				if ((sg->initprot & VM_PROT_EXECUTE) && k < cap)
					r[k++] = (xrange){(uintptr_t)(sg->vmaddr + (uint64_t)slide),
					                  (uintptr_t)(sg->vmaddr + (uint64_t)slide + sg->vmsize), i};
			}
			p += lc->cmdsize;
		}
	}
	*count = k;
	return r;
}

static const xrange *find_range(const xrange *r, size_t n, uintptr_t a)
{
	for (size_t i = 0; i < n; i++)
		if (a >= r[i].lo && a < r[i].hi)
			return &r[i];
	return NULL;
}

static bool in_ranges(const xrange *r, size_t n, uintptr_t a)
{
	return find_range(r, n, a) != NULL;
}

uint64_t tkm_images_generation(void)
{
	return _dyld_image_count();
}

typedef struct jbuf {
	char *p;
	size_t n, cap;
	bool oom;
} jbuf;

static void jput(jbuf *b, const char *s)
{
	size_t len = strlen(s);
	if (b->oom)
		return;
	if (b->n + len + 1 > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 4096;
		while (b->n + len + 1 > cap)
			cap *= 2;
		char *q = realloc(b->p, cap);
		if (!q) {
			b->oom = true;
			return;
		}
		b->p = q;
		b->cap = cap;
	}
	memcpy(b->p + b->n, s, len + 1);
	b->n += len;
}

static void jstr(jbuf *b, const char *s)
{
	char one[8];
	jput(b, "\"");
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			snprintf(one, sizeof one, "\\%c", c);
		else if (c < 0x20)
			snprintf(one, sizeof one, "\\u%04x", c);
		else
			snprintf(one, sizeof one, "%c", c);
		jput(b, one);
	}
	jput(b, "\"");
}

char *tkm_images_json(uint64_t *generation)
{
	jbuf b = {0};
	char tmp[512];
	struct utsname u;
	if (uname(&u) != 0)
		memset(&u, 0, sizeof u);
	snprintf(tmp, sizeof tmp, "%s %s", u.sysname, u.release);
	jput(&b, "{\"os\":");
	jstr(&b, tmp);
	jput(&b, ",\"arch\":");
	jstr(&b, u.machine);
	snprintf(tmp, sizeof tmp, ",\"pid\":%d,\n \"images\":[", (int)getpid());
	jput(&b, tmp);
	uint32_t n = _dyld_image_count();
	for (uint32_t i = 0; i < n; i++) {
		const struct mach_header_64 *h = (const struct mach_header_64 *)_dyld_get_image_header(i);
		if (!h || h->magic != MH_MAGIC_64)
			continue;
		char uuid[33] = "";
		intptr_t slide = _dyld_get_image_vmaddr_slide(i);
		jput(&b, i ? ",\n  {\"path\":" : "\n  {\"path\":");
		jstr(&b, _dyld_get_image_name(i));
		const uint8_t *p = (const uint8_t *)(h + 1);
		for (uint32_t c = 0; c < h->ncmds; c++, p += ((const struct load_command *)p)->cmdsize) {
			const struct uuid_command *uc = (const struct uuid_command *)p;
			if (uc->cmd == LC_UUID && uc->cmdsize == sizeof *uc)
				for (int k = 0; k < 16; k++)
					snprintf(uuid + 2 * k, 3, "%02x", uc->uuid[k]);
		}
		snprintf(tmp, sizeof tmp, ",\"base\":\"0x%lx\",\"build_id\":\"%s\",\"loads\":[", (unsigned long)slide,
		         uuid);
		jput(&b, tmp);
		p = (const uint8_t *)(h + 1);
		bool first = true;
		for (uint32_t c = 0; c < h->ncmds; c++, p += ((const struct load_command *)p)->cmdsize) {
			const struct segment_command_64 *sg = (const struct segment_command_64 *)p;
			if (sg->cmd != LC_SEGMENT_64 || sg->vmsize == 0)
				continue;
			snprintf(
			    tmp, sizeof tmp,
			    "%s{\"vaddr\":\"0x%llx\",\"memsz\":\"0x%llx\",\"offset\":\"0x%llx\",\"flags\":\"%c%c%c\"}",
			    first ? "" : ",", (unsigned long long)sg->vmaddr, (unsigned long long)sg->vmsize,
			    (unsigned long long)sg->fileoff, sg->initprot & VM_PROT_READ ? 'r' : '-',
			    sg->initprot & VM_PROT_WRITE ? 'w' : '-', sg->initprot & VM_PROT_EXECUTE ? 'x' : '-');
			jput(&b, tmp);
			first = false;
		}
		jput(&b, "]}");
	}
	jput(&b, "\n]}\n");
	if (generation)
		*generation = n;
	if (b.oom) {
		free(b.p);
		return NULL;
	}
	return b.p;
}

/* ---------- stacks ---------- */

/* Copy n bytes at addr without faulting; false on an unmapped or protected address. */
static bool safe_read(uintptr_t addr, void *dst, size_t n)
{
	vm_size_t got = 0;
	return vm_read_overwrite(mach_task_self(), (vm_address_t)addr, n, (vm_address_t)dst, &got) == KERN_SUCCESS &&
	       got == n;
}

/* Runs while `port` is suspended: no locks, no allocation, reads through safe_read only. */
static int walk_suspended(thread_act_t port, uintptr_t stack_lo, uintptr_t stack_hi, const xrange *xr, size_t nxr,
                          uintptr_t *frames, int max)
{
	uintptr_t pc, fp, lr = 0;
#if defined(__arm64__) || defined(__aarch64__)
	arm_thread_state64_t st;
	mach_msg_type_number_t cnt = ARM_THREAD_STATE64_COUNT;
	if (thread_get_state(port, ARM_THREAD_STATE64, (thread_state_t)&st, &cnt) != KERN_SUCCESS)
		return 0;
#if __DARWIN_OPAQUE_ARM_THREAD_STATE64
	/* raw fields, not the arm_thread_state64_get_* accessors, which authenticate (and may trap) */
	pc = strip((uintptr_t)st.__opaque_pc);
	lr = strip((uintptr_t)st.__opaque_lr);
	fp = strip((uintptr_t)st.__opaque_fp);
#else
	pc = strip((uintptr_t)st.__pc);
	lr = strip((uintptr_t)st.__lr);
	fp = (uintptr_t)st.__fp;
#endif
	const uintptr_t align = 16;
#elif defined(__x86_64__)
	x86_thread_state64_t st;
	mach_msg_type_number_t cnt = x86_THREAD_STATE64_COUNT;
	if (thread_get_state(port, x86_THREAD_STATE64, (thread_state_t)&st, &cnt) != KERN_SUCCESS)
		return 0;
	pc = (uintptr_t)st.__rip;
	fp = (uintptr_t)st.__rbp;
	const uintptr_t align = 8;
#else
#error "tracekit monitor: unsupported Darwin architecture"
#endif
	int n = 0;
	frames[n++] = pc;
	uintptr_t rec[2];
	bool have_rec = fp && (fp & (align - 1)) == 0 &&
	                (!stack_hi || (fp >= stack_lo && fp + sizeof rec <= stack_hi)) &&
	                safe_read(fp, rec, sizeof rec);
	/* LR as frame 1: only when the PC is in another image than LR (a frameless leaf in a system
	 * library, e.g. a syscall trap, called from the app) and the frame record at FP does not hold
	 * it already. In a non-leaf function LR is stale (it points into the function itself after
	 * its last call), and adding it unconditionally, as MTHawkeye and KSCrash do, makes up a frame. */
	const xrange *pc_img = find_range(xr, nxr, pc), *lr_img = lr ? find_range(xr, nxr, lr) : NULL;
	if (lr_img && pc_img && lr_img->image != pc_img->image && n < max && (!have_rec || strip(rec[1]) != lr))
		frames[n++] = lr - 1;
	while (have_rec && n < max) {
		uintptr_t next = rec[0], ret = strip(rec[1]);
		if (!ret || !in_ranges(xr, nxr, ret))
			break;
		frames[n++] = ret - 1;
		if (next <= fp || next - fp > (1u << 20) || (next & (align - 1)) != 0 ||
		    (stack_hi && next + sizeof rec > stack_hi))
			break;
		fp = next;
		have_rec = safe_read(fp, rec, sizeof rec);
	}
	return n;
}

int tkm_capture(const int64_t *tids, size_t n, tkm_stack *out, int max_frames, unsigned flags)
{
	(void)flags; /* no signal is involved on Darwin, so there is nothing to spare blocked threads */
	if (max_frames < 1)
		max_frames = 1;
	if (max_frames > TKM_MAX_FRAMES)
		max_frames = TKM_MAX_FRAMES;
	int ok = 0;
	for (size_t i = 0; i < n; i++) {
		out[i].tid = tids[i];
		out[i].n = 0;
		out[i].status = TKM_STACK_GONE;
	}
	pthread_mutex_lock(&g_lock);
	port_list pl;
	size_t nxr = 0;
	xrange *xr = exec_ranges(&nxr);
	mach_port_t self = mach_thread_self();
	if (ports_get(&pl) != 0 || !xr) {
		ports_put(&pl);
		free(xr);
		mach_port_deallocate(mach_task_self(), self);
		pthread_mutex_unlock(&g_lock);
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		thread_act_t port = 0;
		for (mach_msg_type_number_t k = 0; k < pl.n; k++)
			if ((int64_t)pl.ids[k] == tids[i])
				port = pl.ports[k];
		if (!port)
			continue;
		if (port == self) {
			out[i].status = TKM_STACK_SELF;
			continue;
		}
		/* bounds before suspending: pthread_from_mach_thread_np takes the pthread list lock */
		uintptr_t lo = 0, hi = 0;
		pthread_t pt = pthread_from_mach_thread_np(port);
		if (pt) {
			hi = (uintptr_t)pthread_get_stackaddr_np(pt);
			lo = hi - pthread_get_stacksize_np(pt);
		}
		if (thread_suspend(port) != KERN_SUCCESS)
			continue;
		int got = walk_suspended(port, lo, hi, xr, nxr, out[i].frames, max_frames);
		thread_resume(port);
		out[i].n = got;
		out[i].status = got > 0 ? TKM_STACK_OK : TKM_STACK_ERROR;
		ok += got > 0;
	}
	ports_put(&pl);
	mach_port_deallocate(mach_task_self(), self);
	free(xr);
	pthread_mutex_unlock(&g_lock);
	return ok;
}
