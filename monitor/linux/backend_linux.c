/*
 * Linux backend of libtracekit-monitor.
 *
 * Per-thread CPU: the thread list is re-read each call from a kept-open /proc/self/task directory
 * descriptor (getdents64), then each thread's CPU clock is read with clock_gettime on the clock id
 * the kernel defines for a tid (the one glibc's pthread_getcpuclockid returns; the kernel only
 * accepts threads of our own process). The alternative, /proc/self/task/<tid>/schedstat read with
 * pread on descriptors kept open between calls (opened for new threads, closed when they exit),
 * measured ~35 % slower here and holds one descriptor per thread (bench/monitor/RESULTS.md).
 *
 * Stacks of other threads: a real-time signal sent with tgkill; its handler (async-signal-safe, no
 * locks, no allocation) walks the frame-pointer chain of the interrupted context into one
 * preallocated slot, validating every frame pointer against the bounds of the mapping that holds
 * the interrupted stack pointer (from a /proc/self/maps snapshot taken by the sampler, never by the
 * handler), monotonic growth, alignment, a bounded step, and every return address against the
 * executable PT_LOAD ranges of the loaded images (from dl_iterate_phdr, also snapshotted by the
 * sampler). The sampler waits with a timeout, so a thread that blocks the signal cannot hang it.
 * Docs: docs/monitor.md (what the signal does to blocking calls, costs).
 */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "../backend.h"
#include "../internal.h"

#define NO_ASAN __attribute__((no_sanitize_address))

/* ---------- small growable arrays owned by the sampler side ---------- */

typedef struct range {
	uintptr_t lo, hi;
	int image;      /* exec ranges: index of the image, to tell "same image" in the leaf recovery */
	bool frameless; /* exec ranges: a system library or the vDSO, assumed built without frame pointers */
} range;

typedef struct range_vec {
	range *v;
	size_t n, cap;
} range_vec;

static void range_push(range_vec *rv, uintptr_t lo, uintptr_t hi, int image, bool frameless)
{
	if (rv->n == rv->cap) {
		size_t cap = rv->cap ? rv->cap * 2 : 64;
		range *v = realloc(rv->v, cap * sizeof *v);
		if (!v)
			return; /* keep what we have: a smaller snapshot only shortens stacks */
		rv->v = v;
		rv->cap = cap;
	}
	rv->v[rv->n++] = (range){lo, hi, image, frameless};
}

static int range_cmp(const void *a, const void *b)
{
	const range *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Async-signal-safe lookup (plain reads of arrays nobody modifies while a capture is in flight). */
static const range *range_find(const range *v, size_t n, uintptr_t a)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (a < v[mid].lo)
			hi = mid;
		else if (a >= v[mid].hi)
			lo = mid + 1;
		else
			return &v[mid];
	}
	return NULL;
}

/* ---------- per-thread table ---------- */

typedef struct thread_ent {
	int64_t tid;
	tkm_fd sched_fd;     /* /proc/self/task/<tid>/schedstat, fd -1 if not open */
	tkm_fd sys_fd;       /* /proc/self/task/<tid>/syscall, opened on first use */
	bool seen;           /* listed by the latest scan */
	bool cache_valid;    /* cache holds the stack taken while blocked in cache_sys */
	uint8_t timeouts;    /* consecutive capture timeouts (the thread blocks our signal) */
	uint8_t skipped;     /* captures skipped since, to retry now and then */
	char cache_sys[160]; /* /proc/…/syscall line at the cached capture */
	tkm_stack *cache;    /* malloc'd on first use */
	tkm_fd perf;         /* its task-clock sampling event (TKM_CAPTURE_RECENT), fd -1 = none */
	void *perf_map;      /* the event's ring buffer */
	uint64_t perf_read;  /* monotonic ns of the last read of the ring (or of its opening) */
	bool perf_refused;   /* this thread's event could not be set up (limits): signals for it */
	uint64_t answered;   /* monotonic ns when it last ran our handler */
} thread_ent;

/* ---------- the capture slot shared with the signal handler ---------- */

enum { SLOT_IDLE = 0, SLOT_REQ = 1, SLOT_RUN = 2, SLOT_DONE = 3 };

typedef struct slot {
	_Atomic uint64_t ticket; /* (seq << 2) | state */
	volatile pid_t tid;
	volatile int max_frames;
	volatile int n;
	volatile int sp_unknown;
	sem_t sem;
	uintptr_t frames[TKM_MAX_FRAMES];
} slot;

static struct {
	pthread_mutex_t lock; /* serialises every backend call */
	int refs;
	int sig;
	struct sigaction old_sa;
	uint32_t timeout_ms;
	int use_schedstat;
	pid_t pid;
	tkm_fd task_dir; /* /proc/self/task, checked before each use (fd.c) */
	thread_ent *threads;
	size_t nthreads, cap_threads;
	bool set_changed; /* thread set changed since the last maps snapshot */
	/* snapshots read by the handler */
	range_vec exec, stacks;
	uint64_t images_gen;
	slot s;
	uint64_t seq;
	int perf; /* 0 = perf_event sampling not tried yet, 1 = works, -1 = refused or turned off */
	uint64_t perf_period;
	int perf_rings; /* rings mapped now */
	tkm_capture_counts counts;
} g = {.lock = PTHREAD_MUTEX_INITIALIZER, .task_dir = {-1, 0, 0}};

/* ---------- clocks ---------- */

uint64_t tkm_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

double tkm_unix_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

uint64_t tkm_process_cpu_ns(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int64_t tkm_self_tid(void)
{
	return (int64_t)syscall(SYS_gettid);
}

static ssize_t read_small(const char *path, char *buf, size_t n)
{
	return tkm_fd_read_small(path, buf, n);
}

double tkm_process_start_unix(void)
{
	char buf[4096];
	if (read_small("/proc/self/stat", buf, sizeof buf) <= 0)
		return 0;
	/* field 22 (starttime, clock ticks of CLOCK_BOOTTIME) counted after the last ')' ending comm:
	 * p starts on the space before field 3 (state) and each step moves to the next field's space.
	 * (Counting from 2 read field 23, vsize: a constant "start" for every run of one binary, so two
	 * runs into one session directory shared a launch time and so a session.) */
	char *p = strrchr(buf, ')');
	if (!p)
		return 0;
	p++;
	unsigned long long start = 0;
	for (int field = 3; field < 22 && p; field++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p, " %llu", &start) != 1)
		return 0;
	long hz = sysconf(_SC_CLK_TCK);
	struct timespec boot;
	if (hz <= 0 || clock_gettime(CLOCK_BOOTTIME, &boot) != 0)
		return 0;
	/* not /proc/stat's btime: it is wrong after the wall clock is stepped (e.g. a restored VM) */
	double age = (double)boot.tv_sec + boot.tv_nsec / 1e9 - (double)start / (double)hz;
	return tkm_unix_now() - (age > 0 ? age : 0);
}

/* ---------- signal handler ---------- */

/* Is the return address preceded by a call instruction? x86-64: E8 rel32 or FF /2 (indirect);
 * arm64: BL or BLR (including the pointer-authenticating BLRAA/BLRAB forms). */
NO_ASAN static bool follows_call(uintptr_t ret)
{
#if defined(__x86_64__)
	const unsigned char *p = (const unsigned char *)ret;
	if (p[-5] == 0xE8)
		return true;
	for (int len = 2; len <= 7; len++) {
		const unsigned char *op = p - len;
		if (op[0] == 0xFF && ((op[1] >> 3) & 7) == 2)
			return true;
	}
	return false;
#else
	uint32_t insn;
	memcpy(&insn, (const void *)(ret - 4), sizeof insn);
	return (insn & 0xFC000000u) == 0x94000000u || (insn & 0xFFFFFC1Fu) == 0xD63F0000u ||
	       (insn & 0xFEFFF800u) == 0xD63F0800u;
#endif
}

#if defined(__aarch64__)
static uintptr_t strip_pac(uintptr_t x)
{
	/* XPACLRI strips the PAC from x30; it is a NOP (hint space) on CPUs without pointer auth. */
	register uintptr_t x30 __asm__("x30") = x;
	__asm__("hint #7" : "+r"(x30));
	return x30;
}
#else
static uintptr_t strip_pac(uintptr_t x)
{
	return x;
}
#endif

#define MAX_FRAME_STEP (1u << 20) /* a frame bigger than 1 MiB is taken as a broken chain */

NO_ASAN static void walk(const ucontext_t *uc, slot *s)
{
	uintptr_t pc, sp, fp, lr = 0;
#if defined(__x86_64__)
	pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
	sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
	fp = (uintptr_t)uc->uc_mcontext.gregs[REG_RBP];
	const uintptr_t align = 8;
#elif defined(__aarch64__)
	pc = (uintptr_t)uc->uc_mcontext.pc;
	sp = (uintptr_t)uc->uc_mcontext.sp;
	fp = (uintptr_t)uc->uc_mcontext.regs[29];
	lr = strip_pac((uintptr_t)uc->uc_mcontext.regs[30]);
	const uintptr_t align = 16;
#else
#error "tracekit monitor: unsupported architecture for the Linux backend"
#endif
	int max = s->max_frames;
	int n = 0;
	s->frames[n++] = pc;
	const range *stk = range_find(g.stacks.v, g.stacks.n, sp);
	if (!stk) {
		s->sp_unknown = 1;
		s->n = n;
		return;
	}
	const range *pc_img = range_find(g.exec.v, g.exec.n, pc);
	uintptr_t lo = sp, hi = stk->hi;
	bool fp_ok = fp >= lo && fp <= hi - 2 * sizeof(uintptr_t) && (fp & (align - 1)) == 0;
	uintptr_t first_ret = fp_ok ? strip_pac(((uintptr_t *)fp)[1]) : 0;

	/*
	 * Leaf recovery. Debian's libc and the vDSO are built without frame pointers: while the PC
	 * is in them, FP still designates the frame of the app function F that called into them, and
	 * a plain walk would go from the PC straight to F's caller, losing F (the function a user
	 * wants to see: the one that blocked). F's return address was pushed by its call into the
	 * library and lies between SP and FP: on arm64 it is usually still in LR; on x86-64 take the
	 * highest word in [SP, FP) that points into another image's code right after a call
	 * instruction. Applied only when the PC is in such a library, never in our own FP-built code,
	 * where [SP, FP) holds the current function's locals.
	 */
	(void)first_ret;
	if (pc_img && pc_img->frameless && n < max) {
#if defined(__aarch64__)
		const range *li = lr ? range_find(g.exec.v, g.exec.n, lr) : NULL;
		if (li && li->image != pc_img->image && lr != first_ret)
			s->frames[n++] = lr - 1;
#else
		(void)lr;
		uintptr_t top = fp_ok ? fp : sp + 4096;
		if (top > hi)
			top = hi;
		if (top - sp > 16384)
			top = sp + 16384;
		for (uintptr_t a = (top - sizeof(uintptr_t)) & ~(uintptr_t)7; a >= sp; a -= sizeof(uintptr_t)) {
			uintptr_t v = *(const uintptr_t *)a;
			const range *vi = range_find(g.exec.v, g.exec.n, v);
			if (vi && vi->image != pc_img->image && v - vi->lo >= 8 && follows_call(v)) {
				s->frames[n++] = v - 1;
				break;
			}
		}
#endif
	}

	while (n < max && fp_ok) {
		const uintptr_t *rec = (const uintptr_t *)fp;
		uintptr_t next = rec[0], ret = strip_pac(rec[1]);
		if (!ret || !range_find(g.exec.v, g.exec.n, ret))
			break;
		s->frames[n++] = ret - 1;
		if (next <= fp || next - fp > MAX_FRAME_STEP || next > hi - 2 * sizeof(uintptr_t) ||
		    (next & (align - 1)) != 0)
			break;
		fp = next;
	}
	s->n = n;
}

static void on_signal(int sig, siginfo_t *si, void *ucv)
{
	int saved = errno;
	(void)sig;
	if (si->si_code == SI_TKILL && si->si_pid == g.pid) {
		slot *s = &g.s;
		uint64_t t = atomic_load_explicit(&s->ticket, memory_order_acquire);
		if ((t & 3) == SLOT_REQ && s->tid == (pid_t)syscall(SYS_gettid) &&
		    atomic_compare_exchange_strong(&s->ticket, &t, (t & ~(uint64_t)3) | SLOT_RUN)) {
			walk((const ucontext_t *)ucv, s);
			atomic_store_explicit(&s->ticket, (t & ~(uint64_t)3) | SLOT_DONE, memory_order_release);
			sem_post(&s->sem);
		}
	}
	errno = saved;
}

/* ---------- snapshots (sampler side) ---------- */

typedef struct img_cb {
	range_vec *exec;
	int index;
	unsigned long long adds, subs;
	char *json;
	size_t len, cap;
	bool want_json;
} img_cb;

static void jput(img_cb *c, const char *s, size_t n)
{
	if (!c->json && c->cap)
		return; /* an earlier allocation failed */
	if (c->len + n + 1 > c->cap) {
		size_t cap = c->cap ? c->cap : 4096;
		while (c->len + n + 1 > cap)
			cap *= 2;
		char *p = realloc(c->json, cap);
		if (!p) {
			free(c->json);
			c->json = NULL;
			c->cap = 1;
			return;
		}
		c->json = p;
		c->cap = cap;
	}
	memcpy(c->json + c->len, s, n);
	c->len += n;
	c->json[c->len] = 0;
}

static void jputs(img_cb *c, const char *s)
{
	jput(c, s, strlen(s));
}

static void jstr(img_cb *c, const char *s)
{
	jput(c, "\"", 1);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		char esc[8];
		if (ch == '"' || ch == '\\') {
			esc[0] = '\\';
			esc[1] = (char)ch;
			jput(c, esc, 2);
		} else if (ch < 0x20) {
			snprintf(esc, sizeof esc, "\\u%04x", ch);
			jput(c, esc, 6);
		} else {
			jput(c, (const char *)&ch, 1);
		}
	}
	jput(c, "\"", 1);
}

static int on_image(struct dl_phdr_info *info, size_t size, void *arg)
{
	img_cb *c = arg;
	(void)size;
	c->adds = info->dlpi_adds;
	c->subs = info->dlpi_subs;
	int idx = c->index++;
	const char *nm0 = info->dlpi_name ? info->dlpi_name : "";
	bool frameless = strncmp(nm0, "/lib/", 5) == 0 || strncmp(nm0, "/lib64/", 7) == 0 ||
	                 strncmp(nm0, "/usr/lib/", 9) == 0 || strncmp(nm0, "/usr/lib64/", 11) == 0 ||
	                 strncmp(nm0, "linux-vdso", 10) == 0 || strncmp(nm0, "linux-gate", 10) == 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (c->exec && ph->p_type == PT_LOAD && (ph->p_flags & PF_X))
			range_push(c->exec, info->dlpi_addr + ph->p_vaddr, info->dlpi_addr + ph->p_vaddr + ph->p_memsz,
			           idx, frameless);
	}
	if (!c->want_json)
		return 0;
	char path[4096];
	const char *name = info->dlpi_name;
	if (idx == 0 && (!name || !*name)) {
		ssize_t r = readlink("/proc/self/exe", path, sizeof path - 1);
		path[r > 0 ? r : 0] = 0;
		name = path;
	}
	char build_id[2 * 64 + 1] = "";
	for (int i = 0; i < info->dlpi_phnum && !build_id[0]; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_NOTE)
			continue;
		const unsigned char *p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
		const unsigned char *end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
			size_t namesz = (nh->n_namesz + 3u) & ~3u, descsz = (nh->n_descsz + 3u) & ~3u;
			const unsigned char *nm = p + sizeof *nh, *desc = nm + namesz;
			if (desc + descsz > end)
				break;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && memcmp(nm, "GNU", 4) == 0 &&
			    nh->n_descsz <= 64) {
				for (unsigned k = 0; k < nh->n_descsz; k++)
					snprintf(build_id + 2 * k, 3, "%02x", desc[k]);
				break;
			}
			p = desc + descsz;
		}
	}
	char buf[256];
	jputs(c, idx ? ",\n  {\"path\":" : "\n  {\"path\":");
	jstr(c, name ? name : "");
	snprintf(buf, sizeof buf, ",\"base\":\"0x%lx\",\"build_id\":\"%s\",\"loads\":[", (unsigned long)info->dlpi_addr,
	         build_id);
	jputs(c, buf);
	int first = 1;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		snprintf(buf, sizeof buf,
		         "%s{\"vaddr\":\"0x%lx\",\"memsz\":\"0x%lx\",\"offset\":\"0x%lx\",\"flags\":\"%c%c%c\"}",
		         first ? "" : ",", (unsigned long)ph->p_vaddr, (unsigned long)ph->p_memsz,
		         (unsigned long)ph->p_offset, ph->p_flags & PF_R ? 'r' : '-', ph->p_flags & PF_W ? 'w' : '-',
		         ph->p_flags & PF_X ? 'x' : '-');
		jputs(c, buf);
		first = 0;
	}
	jputs(c, "]}");
	return 0;
}

/* Refresh the executable ranges when images were loaded or unloaded. Caller holds g.lock. */
static void refresh_exec(void)
{
	range_vec fresh = {0};
	img_cb c = {.exec = &fresh};
	dl_iterate_phdr(on_image, &c);
	qsort(fresh.v, fresh.n, sizeof *fresh.v, range_cmp);
	free(g.exec.v);
	g.exec = fresh;
	g.images_gen = c.adds * 1000003u + c.subs;
}

static int gen_of_first(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	*(uint64_t *)arg = info->dlpi_adds * 1000003u + info->dlpi_subs;
	return 1; /* every object reports the same counters: stop at the first */
}

static uint64_t current_images_gen(void)
{
	uint64_t gen = 0;
	dl_iterate_phdr(gen_of_first, &gen);
	return gen;
}

uint64_t tkm_images_generation(void)
{
	return current_images_gen();
}

/* Snapshot the writable mappings (thread stacks are among them). Caller holds g.lock. */
static void refresh_stacks(void)
{
	/* read whole through a checked descriptor (not stdio, whose descriptor we could not check) */
	tkm_fd f;
	if (tkm_fd_open(&f, "/proc/self/maps", O_RDONLY, 0) != 0)
		return;
	static char *text;
	static size_t cap;
	size_t len = 0;
	for (;;) {
		if (cap - len < 4096) {
			size_t nc = cap ? cap * 2 : 65536;
			char *p = realloc(text, nc);
			if (!p)
				break;
			text = p;
			cap = nc;
		}
		if (!tkm_fd_ours(&f))
			break;
		ssize_t r = read(f.fd, text + len, cap - len - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	tkm_fd_close(&f);
	if (!text)
		return;
	text[len] = 0;
	range_vec fresh = {0};
	for (char *line = text; line < text + len;) {
		char *nl = memchr(line, '\n', (size_t)(text + len - line));
		if (nl)
			*nl = 0;
		unsigned long lo, hi;
		char perms[8];
		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) == 3 && perms[0] == 'r' && perms[1] == 'w')
			range_push(&fresh, lo, hi, -1, false);
		if (!nl)
			break;
		line = nl + 1;
	}
	qsort(fresh.v, fresh.n, sizeof *fresh.v, range_cmp);
	free(g.stacks.v);
	g.stacks = fresh;
	g.set_changed = false;
}

/* ---------- perf_event sampling (TKM_CAPTURE_RECENT) ---------- */

/*
 * A signal round trip to a running thread costs two cross-CPU wake-ups (the tgkill kick of the
 * target's CPU, the semaphore wake of the sampler), each an IPI and, on a VM, an exit: 10-60 µs
 * where the handler itself takes 0.2 µs. Where perf_event_open is permitted (perf_event_paranoid
 * <= 2 allows user-space sampling of one's own threads; seccomp or paranoid 3 refuse it), a
 * thread the CPU trace samples gets a task-clock event instead: the kernel takes a sample every
 * perf_period_ns of the thread's own CPU time (half the CPU trace's high-load interval), on its own CPU, from the timer
 * interrupt (user registers, the frame-pointer call chain, and the top PERF_STACK bytes of its stack for the leaf
 * recovery), and the monitor reads the newest one from the ring buffer: no signal, no wake-up, no
 * system call. A sample is used only if it was taken since the ring was last read and nothing was
 * lost; otherwise (the first time, a thread that barely ran) the signal is used.
 */
#define PERF_PERIOD_NS 20000000u /* of the thread's CPU time, when the caller sets none */
#define PERF_PAGES 4             /* data pages: ~14 samples of 64 frames; the ring counts against perf_event_mlock_kb */
#define PERF_STACK 512           /* bytes of user stack per sample, for the frameless-leaf recovery */
#define PERF_MAX_REC 4096
/* Rings mapped at once. They count against the user's perf_event_mlock_kb (516 KiB by default,
 * shared by all the user's processes): leave most of it to the program and to profilers. */
#define PERF_MAX_RINGS 8

#if defined(__x86_64__)
#include <asm/perf_regs.h>
#define PERF_REGS ((1ull << PERF_REG_X86_BP) | (1ull << PERF_REG_X86_SP) | (1ull << PERF_REG_X86_IP))
enum { R_FP, R_SP, R_PC, R_N }; /* in mask bit order */
#elif defined(__aarch64__)
#include <asm/perf_regs.h>
#define PERF_REGS                                                                                                      \
	((1ull << PERF_REG_ARM64_X29) | (1ull << PERF_REG_ARM64_LR) | (1ull << PERF_REG_ARM64_SP) |                    \
	 (1ull << PERF_REG_ARM64_PC))
enum { R_FP, R_LR, R_SP, R_PC, R_N };
#endif

static void perf_close(thread_ent *t, bool unmap)
{
	if (t->perf_map) {
		if (unmap)
			munmap(t->perf_map, (size_t)(PERF_PAGES + 1) * (size_t)sysconf(_SC_PAGESIZE));
		g.perf_rings--;
	}
	t->perf_map = NULL;
	t->perf_refused = false; /* limits may allow it next time */
	tkm_fd_close(&t->perf);
}

/* Open t's event. Returns true if it is sampling. Caller holds g.lock. */
static bool perf_open(thread_ent *t)
{
	if (g.perf_rings >= PERF_MAX_RINGS)
		return false; /* this thread gets signals until a ring is free */
	struct perf_event_attr a;
	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.sample_period = g.perf_period;
	a.sample_type =
	    PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	a.exclude_callchain_kernel = 1;
	a.use_clockid = 1;
	a.clockid = CLOCK_MONOTONIC; /* the clock of tkm_mono_ns */
	a.sample_regs_user = PERF_REGS;
	a.sample_stack_user = PERF_STACK;
	/* sample_max_stack left 0: the system's kernel.perf_event_max_stack (127 by default; asking
	 * for more than it is EINVAL) */
	int fd = (int)syscall(SYS_perf_event_open, &a, (pid_t)t->tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		if (errno == EACCES || errno == EPERM || errno == ENOSYS || errno == ENOENT || errno == EINVAL ||
		    errno == EOPNOTSUPP)
			g.perf = -1; /* refused (paranoid, seccomp, no kernel support): signals from now on */
		else if (errno != ESRCH)
			t->perf_refused = true; /* out of descriptors or memory: this thread gets signals */
		return false;
	}
	if (tkm_fd_adopt(&t->perf, fd) != 0) {
		t->perf_refused = true;
		return false;
	}
	size_t len = (size_t)(PERF_PAGES + 1) * (size_t)sysconf(_SC_PAGESIZE);
	void *map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, t->perf.fd, 0);
	if (map == MAP_FAILED) { /* EPERM past perf_event_mlock_kb (with many busy threads) */
		tkm_fd_close(&t->perf);
		t->perf_refused = true;
		return false;
	}
	t->perf_map = map;
	g.perf_rings++;
	t->perf_read = tkm_mono_ns();
	g.perf = 1;
	return true;
}

static void ring_copy(const unsigned char *data, uint64_t size, uint64_t off, void *dst, size_t n)
{
	uint64_t o = off % size;
	size_t first = n < size - o ? n : (size_t)(size - o);
	memcpy(dst, data + o, first);
	memcpy((unsigned char *)dst + first, data, n - first);
}

/* The newest sample of t taken since its ring was last read, as a stack. Returns true if st was
 * filled. Caller holds g.lock. */
static bool perf_take(thread_ent *t, int max_frames, tkm_stack *st)
{
	struct perf_event_mmap_page *h = t->perf_map;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	const unsigned char *data = (const unsigned char *)t->perf_map + page;
	const uint64_t size = (uint64_t)PERF_PAGES * page;
	uint64_t head = __atomic_load_n(&h->data_head, __ATOMIC_ACQUIRE), tail = h->data_tail;
	uint64_t since = t->perf_read, newest = 0;
	uint16_t newest_size = 0;
	bool lost = false;
	t->perf_read = tkm_mono_ns();
	while (tail < head) {
		struct perf_event_header eh;
		ring_copy(data, size, tail, &eh, sizeof eh);
		if (eh.size < sizeof eh || eh.size > head - tail)
			break;
		if (eh.type == PERF_RECORD_SAMPLE) {
			newest = tail;
			newest_size = eh.size;
		} else if (eh.type == PERF_RECORD_LOST) {
			lost = true;
		}
		tail += eh.size;
	}
	static uint64_t rec[PERF_MAX_REC / 8];
	bool have = newest_size && newest_size <= sizeof rec;
	if (have)
		ring_copy(data, size, newest, rec, newest_size);
	__atomic_store_n(&h->data_tail, head, __ATOMIC_RELEASE);
	if (!have || lost)
		return false;
	/* TID, TIME, CALLCHAIN, REGS_USER, STACK_USER, in this order */
	const uint64_t *p = rec + 1, *end = rec + newest_size / 8;
	if ((int64_t)(uint32_t)(p[0] >> 32) != t->tid)
		return false;
	uint64_t time = p[1], nr = p[2];
	p += 3;
	if (time < since || nr > (uint64_t)(end - p))
		return false;
	const uint64_t *ips = p;
	p += nr;
	if (p + 1 + R_N > end || p[0] == PERF_SAMPLE_REGS_ABI_NONE)
		return false;
	const uint64_t *regs = p + 1;
	p += 1 + R_N;
	uint64_t stack_size = p < end ? p[0] : 0;
	const unsigned char *stack = (const unsigned char *)(p + 1);
	uint64_t avail = p + 1 <= end ? (uint64_t)((const unsigned char *)end - stack) : 0;
	if (avail < 8 || stack_size > avail - 8)
		stack_size = 0;
	else if (stack_size) {
		uint64_t dyn = *(const uint64_t *)(stack + stack_size);
		if (dyn < stack_size)
			stack_size = dyn;
	}
	uintptr_t pc = (uintptr_t)regs[R_PC], sp = (uintptr_t)regs[R_SP], fp = (uintptr_t)regs[R_FP];
	int n = 0;
	st->frames[n++] = pc;
	/* the leaf recovery of walk(): a PC in frameless system code hides the app function that
	 * called it; its return address is in LR (arm64) or in the stack below FP (x86-64) */
	const range *pc_img = range_find(g.exec.v, g.exec.n, pc);
	uint64_t first_ret = 0;
	for (uint64_t i = 0; i < nr; i++)
		if (ips[i] < PERF_CONTEXT_MAX && ips[i] != pc) {
			first_ret = ips[i];
			break;
		}
	(void)first_ret;
	(void)sp;
	(void)fp;
	if (pc_img && pc_img->frameless && n < max_frames) {
#if defined(__aarch64__)
		uintptr_t lr = strip_pac((uintptr_t)regs[R_LR]);
		const range *li = lr ? range_find(g.exec.v, g.exec.n, lr) : NULL;
		if (li && li->image != pc_img->image && lr != first_ret)
			st->frames[n++] = lr - 1;
#else
		uintptr_t top = fp > sp && fp - sp <= stack_size ? fp : sp + stack_size;
		for (uintptr_t a = (top - sizeof(uintptr_t)) & ~(uintptr_t)7; a >= sp && a + 8 <= sp + stack_size;
		     a -= sizeof(uintptr_t)) {
			uintptr_t v;
			memcpy(&v, stack + (a - sp), sizeof v);
			const range *vi = range_find(g.exec.v, g.exec.n, v);
			if (vi && vi->image != pc_img->image && v - vi->lo >= 8 && follows_call(v)) {
				st->frames[n++] = v - 1;
				break;
			}
		}
#endif
	}
	/* the kernel's frame-pointer chain: the PC, then return addresses; keep them while they are
	 * in code, as the signal handler's walk does */
	bool seen_pc = false;
	for (uint64_t i = 0; i < nr && n < max_frames; i++) {
		uintptr_t ret = (uintptr_t)ips[i];
		if (ips[i] >= PERF_CONTEXT_MAX)
			continue; /* PERF_CONTEXT_USER marker */
		if (!seen_pc) {
			seen_pc = true;
			continue; /* the PC itself, frames[0] */
		}
		ret = strip_pac(ret);
		if (!ret || !range_find(g.exec.v, g.exec.n, ret))
			break;
		st->frames[n++] = ret - 1;
	}
	st->n = n;
	return true;
}

/* ---------- lifecycle ---------- */

static void atfork_prepare(void)
{
	pthread_mutex_lock(&g.lock);
}

static void atfork_parent(void)
{
	pthread_mutex_unlock(&g.lock);
}

static void atfork_child(void)
{
	pthread_mutex_unlock(&g.lock);
	g.pid = getpid();
	/* the child has one thread; descriptors of the parent's threads point at the parent */
	for (size_t i = 0; i < g.nthreads; i++) {
		tkm_fd_close(&g.threads[i].sched_fd);
		tkm_fd_close(&g.threads[i].sys_fd);
		perf_close(&g.threads[i], false); /* its ring is not mapped in the child (VM_DONTCOPY) */
		free(g.threads[i].cache);
	}
	g.nthreads = 0;
	g.set_changed = true;
	/* /proc/self/task was resolved to the parent's pid when it was opened: it lists the parent's
	 * threads. Closed here (a worker must not hold it for hours); reopened if the child monitors. */
	tkm_fd_close(&g.task_dir);
}

static bool signal_is_free(int sig)
{
	struct sigaction sa;
	if (sigaction(sig, NULL, &sa) != 0)
		return false;
	return !(sa.sa_flags & SA_SIGINFO) && sa.sa_handler == SIG_DFL;
}

static void register_atfork(void)
{
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

int tkm_backend_acquire(const tkm_backend_opts *opts, char *err, size_t errlen)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, register_atfork);
	pthread_mutex_lock(&g.lock);
	if (g.refs++ > 0) {
		pthread_mutex_unlock(&g.lock);
		return 0;
	}
	g.pid = getpid();
	g.timeout_ms = opts && opts->capture_timeout_ms ? opts->capture_timeout_ms : 50;
	g.use_schedstat = opts ? opts->use_schedstat : 0;
	g.perf = opts && opts->no_perf ? -1 : 0;
	g.perf_period = opts && opts->perf_period_ns ? opts->perf_period_ns : PERF_PERIOD_NS;
	int sig = opts ? opts->signal : 0;
	if (sig) {
		if (sig < SIGRTMIN || sig > SIGRTMAX || !signal_is_free(sig)) {
			snprintf(err, errlen,
			         "monitor: signal %d is not a free real-time signal (SIGRTMIN=%d SIGRTMAX=%d)", sig,
			         SIGRTMIN, SIGRTMAX);
			goto fail;
		}
	} else {
		for (int s = SIGRTMIN + 4; s <= SIGRTMAX; s++)
			if (signal_is_free(s)) {
				sig = s;
				break;
			}
		if (!sig) {
			snprintf(err, errlen, "monitor: no free real-time signal between SIGRTMIN+4 and SIGRTMAX");
			goto fail;
		}
	}
	if (tkm_fd_open(&g.task_dir, "/proc/self/task", O_RDONLY | O_DIRECTORY, 0) != 0) {
		snprintf(err, errlen, "monitor: /proc/self/task: %s", strerror(errno));
		goto fail;
	}
	if (sem_init(&g.s.sem, 0, 0) != 0) {
		snprintf(err, errlen, "monitor: sem_init: %s", strerror(errno));
		goto fail_dir;
	}
	refresh_exec();
	refresh_stacks();
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_signal;
	/* SA_RESTART: calls that the kernel can restart (read, write, wait, futex …) are restarted
	 * transparently; the ones it never restarts are listed in docs/monitor.md. */
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigfillset(&sa.sa_mask);
	if (sigaction(sig, &sa, &g.old_sa) != 0) {
		snprintf(err, errlen, "monitor: sigaction(%d): %s", sig, strerror(errno));
		goto fail_sem;
	}
	g.sig = sig;
	pthread_mutex_unlock(&g.lock);
	return 0;
fail_sem:
	sem_destroy(&g.s.sem);
fail_dir:
	tkm_fd_close(&g.task_dir);
fail:
	g.refs--;
	pthread_mutex_unlock(&g.lock);
	return -1;
}

void tkm_backend_release(void)
{
	pthread_mutex_lock(&g.lock);
	if (g.refs <= 0 || --g.refs > 0) {
		pthread_mutex_unlock(&g.lock);
		return;
	}
	/* A handler can only be running while a capture is waiting for it, and captures hold g.lock,
	 * so restoring the old disposition here cannot pull the handler from under a walk. A late
	 * signal still queued would find the default action (terminate) for a real-time signal, so
	 * leave our handler installed: it ignores signals it did not request. */
	for (size_t i = 0; i < g.nthreads; i++) {
		tkm_fd_close(&g.threads[i].sched_fd);
		tkm_fd_close(&g.threads[i].sys_fd);
		perf_close(&g.threads[i], true);
		free(g.threads[i].cache);
	}
	free(g.threads);
	g.threads = NULL;
	g.nthreads = g.cap_threads = 0;
	tkm_fd_close(&g.task_dir);
	/* exec/stack snapshots stay allocated for a late handler; refreshed on the next acquire */
	pthread_mutex_unlock(&g.lock);
}

void tkm_capture_counts_get(tkm_capture_counts *c)
{
	pthread_mutex_lock(&g.lock);
	*c = g.counts;
	c->perf_state = g.perf;
	pthread_mutex_unlock(&g.lock);
}

void tkm_capture_quiesce(void)
{
	pthread_mutex_lock(&g.lock);
	for (size_t i = 0; i < g.nthreads; i++)
		perf_close(&g.threads[i], true);
	pthread_mutex_unlock(&g.lock);
}

int tkm_backend_signal(void)
{
	return g.sig;
}

const char *tkm_backend_describe(void)
{
	return g.use_schedstat ? "linux: schedstat descriptors, perf_event or signal + frame-pointer walk"
	                       : "linux: thread CPU clocks, perf_event or signal + frame-pointer walk";
}

/* ---------- thread list and CPU ---------- */

static int tid_cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

static thread_ent *find_thread(int64_t tid)
{
	size_t lo = 0, hi = g.nthreads;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (g.threads[mid].tid < tid)
			lo = mid + 1;
		else if (g.threads[mid].tid > tid)
			hi = mid;
		else
			return &g.threads[mid];
	}
	return NULL;
}

static void drop_thread(thread_ent *t)
{
	tkm_fd_close(&t->sched_fd);
	tkm_fd_close(&t->sys_fd);
	perf_close(t, true);
	free(t->cache);
	t->cache = NULL;
	t->tid = -1;
}

/* Re-list /proc/self/task and merge it into the sorted table. Caller holds g.lock. */
static int scan_threads(void)
{
	static int64_t *tids;
	static size_t cap;
	size_t n = 0;
	char buf[8192];
	if (!tkm_fd_ours(&g.task_dir) && tkm_fd_open(&g.task_dir, "/proc/self/task", O_RDONLY | O_DIRECTORY, 0) != 0)
		return -1; /* the program took our descriptor and we cannot open another */
	if (lseek(g.task_dir.fd, 0, SEEK_SET) < 0)
		return -1;
	for (;;) {
		ssize_t r = getdents64(g.task_dir.fd, buf, sizeof buf);
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		for (ssize_t off = 0; off < r;) {
			struct dirent64 *d = (struct dirent64 *)(buf + off);
			off += d->d_reclen;
			if (d->d_name[0] < '0' || d->d_name[0] > '9')
				continue;
			if (n == cap) {
				size_t nc = cap ? cap * 2 : 64;
				int64_t *p = realloc(tids, nc * sizeof *p);
				if (!p)
					return -1;
				tids = p;
				cap = nc;
			}
			tids[n++] = strtoll(d->d_name, NULL, 10);
		}
	}
	qsort(tids, n, sizeof *tids, tid_cmp);
	/* merge: keep entries still listed, add new ones, close the rest */
	thread_ent *nt = malloc((n ? n : 1) * sizeof *nt);
	if (!nt)
		return -1;
	size_t i = 0, j = 0, k = 0;
	while (j < n) {
		while (i < g.nthreads && g.threads[i].tid < tids[j]) {
			drop_thread(&g.threads[i++]);
			g.set_changed = true;
		}
		if (i < g.nthreads && g.threads[i].tid == tids[j]) {
			nt[k++] = g.threads[i++];
		} else {
			nt[k++] = (thread_ent){
			    .tid = tids[j], .sched_fd = {-1, 0, 0}, .sys_fd = {-1, 0, 0}, .perf = {-1, 0, 0}};
			g.set_changed = true;
		}
		j++;
	}
	while (i < g.nthreads) {
		drop_thread(&g.threads[i++]);
		g.set_changed = true;
	}
	free(g.threads);
	g.threads = nt;
	g.nthreads = k;
	g.cap_threads = n;
	return 0;
}

static bool read_thread_cpu(thread_ent *t, uint64_t *ns)
{
	if (!g.use_schedstat) {
		/* The kernel's encoding of a per-thread CPU clock for a tid (CPUCLOCK_PERTHREAD | SCHED). */
		clockid_t cid = (clockid_t)((~(unsigned)t->tid) << 3) | 6;
		struct timespec ts;
		if (clock_gettime(cid, &ts) != 0)
			return false;
		*ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
		return true;
	}
	if (!tkm_fd_ours(&t->sched_fd)) {
		char path[64];
		snprintf(path, sizeof path, "/proc/self/task/%lld/schedstat", (long long)t->tid);
		if (tkm_fd_open(&t->sched_fd, path, O_RDONLY, 0) != 0)
			return false;
	}
	char buf[96];
	ssize_t r = pread(t->sched_fd.fd, buf, sizeof buf - 1, 0);
	if (r <= 0)
		return false; /* ESRCH once the thread has exited */
	buf[r] = 0;
	*ns = strtoull(buf, NULL, 10);
	return true;
}

int tkm_threads_cpu(tkm_thread_list *out)
{
	pthread_mutex_lock(&g.lock);
	out->n = 0;
	if (g.refs <= 0 || scan_threads() != 0) {
		pthread_mutex_unlock(&g.lock);
		return -1;
	}
	if (out->cap < g.nthreads) {
		tkm_thread_cpu *v = realloc(out->v, g.nthreads * sizeof *v);
		if (!v) {
			pthread_mutex_unlock(&g.lock);
			return -1;
		}
		out->v = v;
		out->cap = g.nthreads;
	}
	for (size_t i = 0; i < g.nthreads; i++) {
		uint64_t ns;
		if (read_thread_cpu(&g.threads[i], &ns))
			out->v[out->n++] = (tkm_thread_cpu){g.threads[i].tid, ns};
	}
	pthread_mutex_unlock(&g.lock);
	return 0;
}

/* ---------- capture ---------- */

/* The program may install its own handler for our signal after we started: then our signals would
 * run its code. Check before the first signal of every batch (one sigaction call) and signal nobody
 * if so (captures that need no signal go on). */
static bool handler_still_ours(void)
{
	struct sigaction cur;
	return sigaction(g.sig, NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_signal;
}

/* Does the thread block sig? A signal sent to a thread that blocks it stays queued there, and the
 * program's own sigwait/sigtimedwait/signalfd would take it as one of its own: never send it then.
 * (A thread that blocks it between this check and the tgkill still gets it queued; the handler
 * ignores it if it ever runs.) Unknown: assume not. Caller holds g.lock. */
static bool thread_blocks(pid_t tid, int sig)
{
	char path[64], buf[4096];
	snprintf(path, sizeof path, "/proc/self/task/%d/status", (int)tid);
	if (tkm_fd_read_small(path, buf, sizeof buf) <= 0)
		return false;
	const char *p = strstr(buf, "\nSigBlk:");
	if (!p)
		return false;
	unsigned long long mask = strtoull(p + 8, NULL, 16);
	return sig >= 1 && sig <= 64 && (mask >> (sig - 1)) & 1;
}

/* One signal round trip. Caller holds g.lock. */
static int capture_one(pid_t tid, int max_frames, tkm_stack *out)
{
	slot *s = &g.s;
	while (sem_trywait(&s->sem) == 0) /* drain posts of completed, abandoned requests */
		;
	uint64_t seq = ++g.seq;
	const uint64_t done = (seq << 2) | SLOT_DONE;
	s->tid = tid;
	s->max_frames = max_frames;
	s->n = 0;
	s->sp_unknown = 0;
	atomic_store_explicit(&s->ticket, (seq << 2) | SLOT_REQ, memory_order_release);
	if (syscall(SYS_tgkill, g.pid, tid, g.sig) != 0) {
		atomic_store(&s->ticket, (seq << 2) | SLOT_IDLE);
		return errno == ESRCH ? TKM_STACK_GONE : TKM_STACK_ERROR;
	}
	struct timespec dl;
	clock_gettime(CLOCK_REALTIME, &dl);
	uint64_t ns = (uint64_t)dl.tv_nsec + (uint64_t)g.timeout_ms * 1000000u;
	dl.tv_sec += (time_t)(ns / 1000000000u);
	dl.tv_nsec = (long)(ns % 1000000000u);
	/* a post may be a late one from an earlier round whose handler finished after that round
	 * gave up waiting: always re-check the ticket, which names this round */
	while (atomic_load_explicit(&s->ticket, memory_order_acquire) != done) {
		if (sem_timedwait(&s->sem, &dl) == 0 || errno == EINTR)
			continue;
		/* timed out: withdraw the request unless the handler already took it */
		uint64_t t = (seq << 2) | SLOT_REQ;
		if (atomic_compare_exchange_strong(&s->ticket, &t, (seq << 2) | SLOT_IDLE))
			return TKM_STACK_TIMEOUT;
		while (atomic_load(&s->ticket) != done)
			sched_yield(); /* the walk is running; it takes microseconds */
	}
	out->n = s->n;
	memcpy(out->frames, s->frames, (size_t)s->n * sizeof s->frames[0]);
	int unknown = s->sp_unknown;
	atomic_store(&s->ticket, (seq << 2) | SLOT_IDLE);
	return unknown ? 1 : TKM_STACK_OK;
}

/* The /proc/…/syscall line of a thread: "running", or the syscall number, arguments, SP and PC of
 * a thread blocked in the kernel. Caller holds g.lock. */
static bool read_syscall_line(thread_ent *t, char *buf, size_t n)
{
	if (!tkm_fd_ours(&t->sys_fd)) {
		char path[64];
		snprintf(path, sizeof path, "/proc/self/task/%lld/syscall", (long long)t->tid);
		if (tkm_fd_open(&t->sys_fd, path, O_RDONLY, 0) != 0)
			return false;
	}
	ssize_t r = pread(t->sys_fd.fd, buf, n - 1, 0);
	if (r <= 0)
		return false;
	buf[r] = 0;
	return true;
}

/*
 * Signal-free capture of a thread blocked in a system call. /proc/self/task/<tid>/syscall gives its
 * user SP and PC; while it stays blocked its stack does not change, so the monitor copies it with
 * process_vm_readv (a bad address is an error, never a fault) and walks the copy. The frame pointer
 * is not in that file: the walk starts at the first word above SP that is a valid frame record
 * whose successor is valid too (saved FP pointing higher in the stack, return address in an
 * image's code just after a call); the line is read again afterwards and the result kept only if
 * the thread is still in the same call. This spares blocked threads the EINTR a signal causes.
 */
#define SCAN_MAX (256u * 1024u)

static struct {
	unsigned char *buf;
	bool disabled; /* process_vm_readv refused (seccomp …): always use the signal */
} scan;

static bool parse_blocked(const char *line, uintptr_t *sp, uintptr_t *pc)
{
	unsigned long long v[9];
	int n = sscanf(line, "%lld %llx %llx %llx %llx %llx %llx %llx %llx", (long long *)&v[0], &v[1], &v[2], &v[3],
	               &v[4], &v[5], &v[6], &v[7], &v[8]);
	if (n != 9 || (long long)v[0] < 0)
		return false;
	*sp = (uintptr_t)v[7];
	*pc = (uintptr_t)v[8];
	return true;
}

static int walk_copy(uintptr_t pc, uintptr_t sp, const unsigned char *buf, size_t len, uintptr_t *frames, int max)
{
	const uintptr_t top = sp + len;
#define WORD(a) (*(const uintptr_t *)(buf + ((a)-sp)))
#define IN(a) ((a) >= sp && (a) + 2 * sizeof(uintptr_t) <= top && ((a) & (sizeof(uintptr_t) - 1)) == 0)
	int n = 0;
	frames[n++] = pc;
	const range *pc_img = range_find(g.exec.v, g.exec.n, pc);
	uintptr_t fp = 0, caller = 0;
	for (uintptr_t a = sp; a + 4 * sizeof(uintptr_t) <= top && a - sp < 65536; a += sizeof(uintptr_t)) {
		uintptr_t next = WORD(a), ret = strip_pac(WORD(a + sizeof(uintptr_t)));
		if (!range_find(g.exec.v, g.exec.n, ret) || !follows_call(ret))
			continue;
		/* a frame record: saved FP 0 (the outermost frame, e.g. a thread function called by
		 * start_thread) or pointing higher, at a record that is valid or outermost too */
		if (next != 0) {
			if (next <= a || next - a > MAX_FRAME_STEP || !IN(next))
				continue;
			uintptr_t next2 = WORD(next), ret2 = strip_pac(WORD(next + sizeof(uintptr_t)));
			if (!range_find(g.exec.v, g.exec.n, ret2) || !follows_call(ret2) ||
			    !(next2 == 0 || (next2 > next && next2 - next <= MAX_FRAME_STEP && IN(next2))))
				continue;
		}
		/* While the PC is in a frameless library (the usual case: a syscall wrapper), the real
		 * record belongs to the app function F that called into it, and F's return address lies
		 * below it; a look-alike pushed inside the library has none below it: keep looking. */
		if (pc_img && pc_img->frameless) {
			caller = 0;
			for (uintptr_t b = a - sizeof(uintptr_t); b >= sp; b -= sizeof(uintptr_t)) {
				uintptr_t v = strip_pac(WORD(b));
				const range *vi = range_find(g.exec.v, g.exec.n, v);
				if (vi && vi->image != pc_img->image && v - vi->lo >= 8 && follows_call(v)) {
					caller = v;
					break;
				}
			}
			if (!caller)
				continue;
		}
		fp = a;
		break;
	}
	if (!fp)
		return 0;
	if (caller && n < max)
		frames[n++] = caller - 1;
	while (n < max) {
		uintptr_t next = WORD(fp), ret = strip_pac(WORD(fp + sizeof(uintptr_t)));
		if (!ret || !range_find(g.exec.v, g.exec.n, ret))
			break;
		frames[n++] = ret - 1;
		if (next <= fp || next - fp > MAX_FRAME_STEP || !IN(next))
			break;
		fp = next;
	}
#undef WORD
#undef IN
	return n;
}

/* Caller holds g.lock. Returns true with st filled, or false to fall back to the signal. */
static bool capture_blocked(thread_ent *t, const char *line, int max_frames, tkm_stack *st)
{
	uintptr_t sp, pc;
	if (scan.disabled || !parse_blocked(line, &sp, &pc))
		return false;
	if (g.set_changed)
		refresh_stacks(); /* a new thread's stack may not be in the snapshot yet */
	const range *stk = range_find(g.stacks.v, g.stacks.n, sp);
	if (!stk) {
		refresh_stacks();
		if (!(stk = range_find(g.stacks.v, g.stacks.n, sp)))
			return false;
	}
	if (!scan.buf && !(scan.buf = malloc(SCAN_MAX)))
		return false;
	size_t want = stk->hi - sp < SCAN_MAX ? stk->hi - sp : SCAN_MAX;
	struct iovec local = {scan.buf, want}, remote = {(void *)sp, want};
	ssize_t got = process_vm_readv(g.pid, &local, 1, &remote, 1, 0);
	if (got < 0) {
		if (errno == EPERM || errno == ENOSYS)
			scan.disabled = true;
		return false;
	}
	int n = walk_copy(pc, sp, scan.buf, (size_t)got & ~(sizeof(uintptr_t) - 1), st->frames, max_frames);
	char again[sizeof t->cache_sys];
	if (n < 2 || !read_syscall_line(t, again, sizeof again) || strcmp(again, line) != 0)
		return false; /* nothing plausible, or it woke up meanwhile: let the signal do it */
	st->n = n;
	return true;
}

int tkm_capture(const int64_t *tids, size_t n, tkm_stack *out, int max_frames, unsigned flags)
{
	if (max_frames < 1)
		max_frames = 1;
	if (max_frames > TKM_MAX_FRAMES)
		max_frames = TKM_MAX_FRAMES;
	int64_t self = tkm_self_tid();
	int ok = 0;
	pthread_mutex_lock(&g.lock);
	if (g.refs <= 0) {
		for (size_t i = 0; i < n; i++)
			out[i] = (tkm_stack){.tid = tids[i], .status = TKM_STACK_ERROR};
		pthread_mutex_unlock(&g.lock);
		return 0;
	}
	if (current_images_gen() != g.images_gen)
		refresh_exec();
	int handler_ok = -1; /* checked once per batch, before its first signal */
	for (size_t i = 0; i < n; i++) {
		tkm_stack *st = &out[i];
		st->tid = tids[i];
		st->n = 0;
		if (tids[i] == self) {
			st->status = TKM_STACK_SELF;
			continue;
		}
		thread_ent *t = find_thread(tids[i]);
		if (!t && scan_threads() == 0) /* a thread we have not listed yet */
			t = find_thread(tids[i]);
		if (t && (flags & TKM_CAPTURE_RECENT) && g.perf >= 0) {
			if (t->perf_map && perf_take(t, max_frames, st)) {
				st->status = TKM_STACK_OK;
				g.counts.perf++;
				ok++;
				continue;
			}
			if (!t->perf_map && !t->perf_refused)
				perf_open(t); /* samples from the next capture on; this one takes the usual way */
		}
		char sys[sizeof t->cache_sys] = "";
		bool blocked = false;
		if (t && (flags & TKM_CAPTURE_GENTLE) && read_syscall_line(t, sys, sizeof sys)) {
			/* the kernel answers "running" when the thread is not settled in its wait yet; a
			 * thread that just blocked is often seen so once: ask again before signalling it */
			if (strncmp(sys, "running", 7) == 0)
				read_syscall_line(t, sys, sizeof sys);
			blocked = strncmp(sys, "running", 7) != 0 && sys[0] != '-';
			if (blocked && (flags & TKM_CAPTURE_REUSE_BLOCKED) && t->cache_valid && t->cache &&
			    strcmp(sys, t->cache_sys) == 0) {
				st->n = t->cache->n;
				memcpy(st->frames, t->cache->frames, (size_t)st->n * sizeof st->frames[0]);
				if (st->n > max_frames)
					st->n = max_frames;
				st->status = TKM_STACK_CACHED;
				g.counts.cached++;
				ok++;
				continue;
			}
		}
		if (blocked && (flags & TKM_CAPTURE_SCAN_BLOCKED) && capture_blocked(t, sys, max_frames, st)) {
			st->status = TKM_STACK_OK;
			g.counts.scan++;
			ok++;
			if (!t->cache)
				t->cache = malloc(sizeof *t->cache);
			if (t->cache) {
				*t->cache = *st;
				memcpy(t->cache_sys, sys, sizeof t->cache_sys);
				t->cache_valid = true;
			}
			continue;
		}
		if (t && t->timeouts >= 2 && ++t->skipped % 16 != 0) {
			/* it blocked the signal twice running: do not make every snapshot wait for it,
			 * only retry every 16th time (its mask may have changed) */
			st->status = TKM_STACK_TIMEOUT;
			continue;
		}
		if (handler_ok < 0)
			handler_ok = handler_still_ours();
		if (!handler_ok) { /* the program took our signal: never make it run foreign code */
			st->status = TKM_STACK_ERROR;
			continue;
		}
		/* A thread that ran our handler in the last second did not block the signal then: spare it
		 * the /proc read (and a thread still returning from our handler, which runs with every
		 * signal blocked, is not taken for one that blocks it). */
		bool recent = t && t->answered && tkm_mono_ns() - t->answered < 1000000000u;
		if (!recent && thread_blocks((pid_t)tids[i], g.sig)) {
			st->status = TKM_STACK_TIMEOUT; /* as if it had not answered; not sent */
			if (t && t->timeouts < 255)
				t->timeouts++;
			continue;
		}
		if (g.set_changed)
			refresh_stacks(); /* new threads have new stacks */
		int rc = capture_one((pid_t)tids[i], max_frames, st);
		g.counts.signal++;
		if (rc == 1) { /* stack pointer outside the snapshot: the stack grew or is new; retry once */
			refresh_stacks();
			rc = capture_one((pid_t)tids[i], max_frames, st);
			if (rc == 1)
				rc = TKM_STACK_OK; /* keep the PC alone */
		}
		st->status = rc;
		if (t && rc == TKM_STACK_TIMEOUT && t->timeouts < 255)
			t->timeouts++;
		if (rc == TKM_STACK_OK) {
			ok++;
			if (t) {
				t->timeouts = 0;
				t->answered = tkm_mono_ns();
			}
			if (t && blocked && (flags & TKM_CAPTURE_REUSE_BLOCKED)) {
				if (!t->cache)
					t->cache = malloc(sizeof *t->cache);
				if (t->cache) {
					*t->cache = *st;
					memcpy(t->cache_sys, sys, sizeof t->cache_sys);
					t->cache_valid = true;
				}
			} else if (t) {
				t->cache_valid = false;
			}
		}
	}
	pthread_mutex_unlock(&g.lock);
	return ok;
}

void tkm_thread_blocked_in(int64_t tid, long *syscall_nr, char *wchan, size_t n)
{
	char path[64], buf[256];
	*syscall_nr = -2;
	if (n)
		wchan[0] = 0;
	snprintf(path, sizeof path, "/proc/self/task/%lld/syscall", (long long)tid);
	if (read_small(path, buf, sizeof buf) > 0)
		*syscall_nr = strncmp(buf, "running", 7) == 0 ? -1 : strtol(buf, NULL, 10);
	if (*syscall_nr < 0)
		*syscall_nr = *syscall_nr == -2 ? -2 : -1;
	snprintf(path, sizeof path, "/proc/self/task/%lld/wchan", (long long)tid);
	if (n && read_small(path, buf, sizeof buf) > 0 && strcmp(buf, "0") != 0)
		snprintf(wchan, n, "%s", buf);
}

void tkm_thread_name(int64_t tid, char *buf, size_t n)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/self/task/%lld/comm", (long long)tid);
	if (n == 0)
		return;
	buf[0] = 0;
	if (read_small(path, buf, n) > 0) {
		char *nl = strchr(buf, '\n');
		if (nl)
			*nl = 0;
	}
}

char *tkm_images_json(uint64_t *generation)
{
	img_cb c = {.want_json = true};
	struct utsname u;
	char head[512];
	if (uname(&u) != 0)
		memset(&u, 0, sizeof u);
	jputs(&c, "{\"os\":");
	snprintf(head, sizeof head, "%s %s", u.sysname, u.release);
	jstr(&c, head);
	jputs(&c, ",\"arch\":");
	jstr(&c, u.machine);
	snprintf(head, sizeof head, ",\"pid\":%d,\n \"images\":[", (int)getpid());
	jputs(&c, head);
	dl_iterate_phdr(on_image, &c);
	jputs(&c, "\n]}\n");
	if (generation)
		*generation = c.adds * 1000003u + c.subs;
	return c.json;
}
