/*
 * bench_monitor — costs of libtracekit-monitor on this machine (see bench/bench_monitor.sh).
 *
 *   bench_monitor tick [THREADS=30] [ITER=2000]   low-load tick; all-thread CPU read (schedstat, clock)
 *   bench_monitor stack [ITER=2000]               one stack capture: running thread, blocked thread, cached
 *   bench_monitor overhead [SECONDS=20] [THRESHOLD] monitor CPU at default settings on a 2-thread busy
 *                                                  program (THRESHOLD: force the high-load mode)
 *   bench_monitor eintr [N=200]                   what the capture signal does to blocking calls
 *   bench_monitor perfcost [SECONDS=2]            what one perf_event sample costs the sampled thread
 *
 * Prints "name value unit" lines. Times are medians (and p90) of ITER runs.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

#include "tracekit/monitor.h"

#include "backend.h"

static _Atomic int stop;
static _Atomic int64_t tids[256];
static _Atomic int ntids;

static uint64_t now_ns(void)
{
	return tkm_mono_ns();
}

static uint64_t sampler_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void report(const char *name, uint64_t *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_u64);
	printf("%s_median_us %.2f\n%s_p90_us %.2f\n", name, v[n / 2] / 1000.0, name, v[n * 9 / 10] / 1000.0);
}

static void *sleeper(void *arg)
{
	atomic_store(&tids[atomic_fetch_add(&ntids, 1)], tkm_self_tid());
	while (!atomic_load(&stop))
		usleep(5000);
	return arg;
}

__attribute__((noinline)) static void spin_leaf(void)
{
	volatile unsigned x = 0;
	while (!atomic_load(&stop))
		x++;
}

static void *spinner(void *arg)
{
	atomic_store(&tids[atomic_fetch_add(&ntids, 1)], tkm_self_tid());
	spin_leaf();
	return arg;
}

static void start_threads(pthread_t *t, int n, void *(*fn)(void *))
{
	for (int i = 0; i < n; i++)
		pthread_create(&t[i], NULL, fn, NULL);
	while (atomic_load(&ntids) < n)
		usleep(1000);
}

static void stop_threads(pthread_t *t, int n)
{
	atomic_store(&stop, 1);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	atomic_store(&stop, 0);
	atomic_store(&ntids, 0);
}

static int bench_tick(int nthreads, int iter)
{
	pthread_t t[256];
	start_threads(t, nthreads - 1, sleeper); /* + the main thread */
	uint64_t *v = malloc((size_t)iter * sizeof *v);
	char err[256];
	for (int clk = 0; clk <= 1; clk++) {
		tkm_backend_opts o = {.use_schedstat = clk};
		if (tkm_backend_acquire(&o, err, sizeof err) != 0) {
			fprintf(stderr, "%s\n", err);
			return 1;
		}
		tkm_thread_list l = {0};
		tkm_threads_cpu(&l); /* opens the descriptors */
		for (int i = 0; i < iter; i++) {
			uint64_t a = now_ns();
			tkm_threads_cpu(&l);
			v[i] = now_ns() - a;
		}
		printf("threads %zu\n", l.n);
		report(clk ? "all_thread_cpu_schedstat" : "all_thread_cpu_clock", v, iter);
		free(l.v);
		tkm_backend_release();
	}
	/* the low-load tick: what the CPU thread does every second below the threshold */
	volatile uint64_t sink = 0;
	for (int i = 0; i < iter; i++) {
		uint64_t a = now_ns();
		sink += tkm_mono_ns() + tkm_process_cpu_ns();
		v[i] = now_ns() - a;
	}
	(void)sink;
	report("low_load_tick", v, iter);
	free(v);
	stop_threads(t, nthreads - 1);
	return 0;
}

static int bench_stack(int iter)
{
	char err[256];
	tkm_backend_opts o = {0};
	if (tkm_backend_acquire(&o, err, sizeof err) != 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	uint64_t *v = malloc((size_t)iter * sizeof *v);
	tkm_stack st;
	pthread_t t[2];
	int frames = 0;

	start_threads(t, 1, spinner);
	int64_t tid = atomic_load(&tids[0]);
	for (int i = 0; i < iter; i++) {
		uint64_t a = now_ns();
		tkm_capture(&tid, 1, &st, 64, 0);
		v[i] = now_ns() - a;
		frames += st.n;
	}
	printf("running_frames_avg %.1f\n", (double)frames / iter);
	report("stack_running", v, iter);
	/*
	 * What the CPU trace does: one batch per tick (300 ms), so every capture starts with cold
	 * caches and a sampler that was asleep. Here one capture per 30 ms (a busy thread gets a
	 * perf_event sample every 20 ms of its CPU), with the CPU trace's flags: without RECENT (the
	 * signal, as before perf_event sampling) and with it (a perf_event sample when the kernel
	 * permits it and the thread ran 20 ms since the previous capture, else the signal; only the
	 * captures served by perf_event are in stack_running_perf).
	 */
	{
		int piter = iter < 200 ? iter : 200, nperf = 0;
		uint64_t *vp = malloc((size_t)piter * sizeof *vp), *vc = malloc((size_t)piter * sizeof *vc);
		for (int i = 0; i < piter; i++) {
			usleep(30000);
			uint64_t a = now_ns(), c = sampler_cpu_ns();
			tkm_capture(&tid, 1, &st, 64, TKM_CAPTURE_GENTLE);
			vp[i] = now_ns() - a;
			vc[i] = sampler_cpu_ns() - c;
		}
		report("stack_running_signal_cold", vp, piter);
		report("stack_running_signal_cold_sampler_cpu", vc, piter);
		tkm_capture_counts c0, c1;
		tkm_capture(&tid, 1, &st, 64, TKM_CAPTURE_GENTLE | TKM_CAPTURE_RECENT); /* sets it up */
		frames = 0;
		for (int i = 0; i < piter; i++) {
			usleep(30000);
			tkm_capture_counts_get(&c0);
			uint64_t a = now_ns(), c = sampler_cpu_ns();
			tkm_capture(&tid, 1, &st, 64, TKM_CAPTURE_GENTLE | TKM_CAPTURE_RECENT);
			uint64_t d = now_ns() - a, dc = sampler_cpu_ns() - c;
			tkm_capture_counts_get(&c1);
			if (c1.perf > c0.perf) {
				vc[nperf] = dc;
				vp[nperf++] = d;
				frames += st.n;
			}
		}
		printf("perf_served_fraction %.3f\n", (double)nperf / piter);
		if (nperf) {
			printf("perf_frames_avg %.1f\n", (double)frames / nperf);
			report("stack_running_perf", vp, nperf);
			report("stack_running_perf_sampler_cpu", vc, nperf);
		}
		free(vp);
		free(vc);
		tkm_capture_quiesce();
	}
	stop_threads(t, 1);

	start_threads(t, 1, sleeper);
	tid = atomic_load(&tids[0]);
	frames = 0;
	for (int i = 0; i < iter; i++) {
		uint64_t a = now_ns();
		tkm_capture(&tid, 1, &st, 64, 0);
		v[i] = now_ns() - a;
		frames += st.n;
	}
	printf("blocked_frames_avg %.1f\n", (double)frames / iter);
	report("stack_blocked_signal", v, iter);
	int cached = 0;
	for (int i = 0; i < iter; i++) {
		uint64_t a = now_ns();
		tkm_capture(&tid, 1, &st, 64, TKM_CAPTURE_REUSE_BLOCKED);
		v[i] = now_ns() - a;
		cached += st.status == TKM_STACK_CACHED;
	}
	printf("blocked_reuse_cached_fraction %.3f\n", (double)cached / iter);
	report("stack_blocked_reuse", v, iter);
	frames = 0;
	for (int i = 0; i < iter; i++) {
		uint64_t a = now_ns();
		tkm_capture(&tid, 1, &st, 64, TKM_CAPTURE_SCAN_BLOCKED);
		v[i] = now_ns() - a;
		frames += st.n;
	}
	printf("blocked_scan_frames_avg %.1f\n", (double)frames / iter);
	report("stack_blocked_scan", v, iter);
	stop_threads(t, 1);
	free(v);
	tkm_backend_release();
	return 0;
}

static uint64_t thread_cpu_ns(int64_t tid)
{
	char path[64], buf[96];
	snprintf(path, sizeof path, "/proc/self/task/%lld/schedstat", (long long)tid);
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	ssize_t r = read(fd, buf, sizeof buf - 1);
	close(fd);
	buf[r > 0 ? r : 0] = 0;
	return strtoull(buf, NULL, 10);
}

static int64_t find_thread(const char *name)
{
	tkm_thread_list l = {0};
	tkm_threads_cpu(&l);
	int64_t found = 0;
	for (size_t i = 0; i < l.n && !found; i++) {
		char n[64];
		tkm_thread_name(l.v[i].tid, n, sizeof n);
		if (strcmp(n, name) == 0)
			found = l.v[i].tid;
	}
	free(l.v);
	return found;
}

static int bench_overhead(double seconds, double threshold)
{
	tk_monitor_config c;
	tk_monitor_config_default(&c);
	char dir[] = "/tmp/tk-bench-monitor-XXXXXX";
	if (!mkdtemp(dir))
		return 1;
	c.dir = dir;
	c.cpu_duration_ms = 5000; /* so the 5 s rewrites of the living record are part of the cost */
	if (threshold > 0)
		c.cpu_threshold = threshold; /* force the high-load mode on a loaded machine */
	c.hang_enabled = 1;                  /* heartbeat mode, nobody beats: the watchdog's idle cost */
	char err[256];
	pthread_t t[2];
	start_threads(t, 2, spinner);
	tk_monitor *m = tk_monitor_start(&c, err, sizeof err);
	if (!m) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	usleep(100000);
	int64_t cpu_tid = find_thread("tk-monitor-cpu"), hang_tid = find_thread("tk-monitor-hang");
	uint64_t p0 = tkm_process_cpu_ns(), w0 = now_ns(), m0 = thread_cpu_ns(cpu_tid) + thread_cpu_ns(hang_tid);
	usleep((useconds_t)(seconds * 1e6));
	uint64_t p1 = tkm_process_cpu_ns(), w1 = now_ns(), m1 = thread_cpu_ns(cpu_tid) + thread_cpu_ns(hang_tid);
	tk_monitor_stop(m);
	stop_threads(t, 2);
	char path[128], line[256];
	int records = 0;
	snprintf(path, sizeof path, "%s/records", dir);
	FILE *f = fopen(path, "r");
	while (f && fgets(line, sizeof line, f))
		records += strncmp(line, "cpu-highload,", 13) == 0;
	if (f)
		fclose(f);
	printf("cpu_threshold_percent %.0f\n", c.cpu_threshold);
	printf("living_record_writes %d\n", records);
	double mon = (double)(m1 - m0), proc = (double)(p1 - p0), wall = (double)(w1 - w0);
	printf("busy_process_cpu_cores %.2f\n", proc / wall);
	printf("monitor_threads_cpu_percent_of_one_core %.4f\n", 100 * mon / wall);
	printf("monitor_threads_cpu_percent_of_process %.4f\n", 100 * mon / proc);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd) != 0)
		return 1;
	return 0;
}

/* ---------- EINTR ---------- */

enum { K_NANOSLEEP, K_POLL, K_EPOLL, K_SELECT, K_READ_PIPE, K_SEM_WAIT, K_COND_WAIT, K_COUNT };
static const char *knames[] = {"nanosleep",  "poll",     "epoll_wait",       "select",
                               "read(pipe)", "sem_wait", "pthread_cond_wait"};
static _Atomic int kind, eintr_count, calls;
static int pipefd[2], epfd;
static sem_t sem;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;

static void *blocker(void *arg)
{
	atomic_store(&tids[0], tkm_self_tid());
	atomic_store(&ntids, 1);
	while (!atomic_load(&stop)) {
		int r = 0;
		switch (atomic_load(&kind)) {
		case K_NANOSLEEP: {
			struct timespec ts = {0, 50 * 1000 * 1000};
			r = nanosleep(&ts, NULL);
			break;
		}
		case K_POLL: {
			struct pollfd p = {.fd = pipefd[0], .events = POLLIN};
			r = poll(&p, 1, 50);
			break;
		}
		case K_EPOLL: {
			struct epoll_event ev;
			r = epoll_wait(epfd, &ev, 1, 50);
			break;
		}
		case K_SELECT: {
			fd_set s;
			FD_ZERO(&s);
			FD_SET(pipefd[0], &s);
			struct timeval tv = {0, 50000};
			r = select(pipefd[0] + 1, &s, NULL, NULL, &tv);
			break;
		}
		case K_READ_PIPE: {
			char c;
			r = (int)read(pipefd[0], &c, 1);
			break;
		}
		case K_SEM_WAIT: r = sem_wait(&sem); break;
		case K_COND_WAIT:
			pthread_mutex_lock(&mu);
			r = pthread_cond_wait(&cv, &mu);
			pthread_mutex_unlock(&mu);
			if (r == EINTR)
				r = -1, errno = EINTR;
			break;
		}
		atomic_fetch_add(&calls, 1);
		if (r < 0 && errno == EINTR)
			atomic_fetch_add(&eintr_count, 1);
	}
	return arg;
}

static int bench_eintr(int n)
{
	char err[256];
	tkm_backend_opts o = {0};
	if (tkm_backend_acquire(&o, err, sizeof err) != 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	if (pipe(pipefd) != 0)
		return 1;
	epfd = epoll_create1(0);
	struct epoll_event ev = {.events = EPOLLIN};
	epoll_ctl(epfd, EPOLL_CTL_ADD, pipefd[0], &ev);
	sem_init(&sem, 0, 0);
	tkm_stack st;
	for (int k = 0; k < K_COUNT; k++) {
		static const unsigned modes[] = {0, TKM_CAPTURE_REUSE_BLOCKED, TKM_CAPTURE_GENTLE};
		static const char *mode_names[] = {"signal", "reuse", "scan+reuse"};
		for (int mode = 0; mode < 3; mode++) {
			atomic_store(&kind, k);
			atomic_store(&stop, 0);
			atomic_store(&ntids, 0);
			pthread_t t;
			pthread_create(&t, NULL, blocker, NULL);
			while (!atomic_load(&ntids))
				usleep(1000);
			usleep(20000);
			atomic_store(&eintr_count, 0);
			int64_t tid = atomic_load(&tids[0]);
			int sent = 0;
			for (int i = 0; i < n; i++) {
				usleep(2000);
				tkm_capture(&tid, 1, &st, 64, modes[mode]);
				sent += st.status == TKM_STACK_OK;
			}
			int e = atomic_load(&eintr_count);
			atomic_store(&stop, 1);
			/* wake the blocked call */
			if (write(pipefd[1], "x", 1) != 1)
				return 1;
			sem_post(&sem);
			pthread_mutex_lock(&mu);
			pthread_cond_broadcast(&cv);
			pthread_mutex_unlock(&mu);
			pthread_join(t, NULL);
			char c;
			fcntl(pipefd[0], F_SETFL, O_NONBLOCK);
			while (read(pipefd[0], &c, 1) == 1)
				;
			fcntl(pipefd[0], F_SETFL, 0);
			while (sem_trywait(&sem) == 0)
				;
			printf("eintr %-18s %-10s captures %4d fresh %4d EINTR-to-caller %4d\n", knames[k],
			       mode_names[mode], n, sent, e);
		}
	}
	tkm_backend_release();
	return 0;
}

/*
 * What a capture costs the thread captured (beyond what the sampler spends): a perf_event sample
 * (in the kernel, on the thread's own CPU: timer interrupt, registers, call chain, stack copy), or a
 * signal (delivery, handler, sigreturn). Too small to see at the monitor's rates, so raise them (a
 * sample every 100 µs of the thread's CPU; signal captures back to back) and compare the thread's
 * median CPU time per fixed chunk of work with and without (off, on, off), per capture in a chunk.
 */
static _Atomic int phase; /* 0, 1 (captured), 2; 3 = stop */
static uint64_t chunk_ns[3][65536];
static _Atomic int nchunks[3];

static uint64_t own_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

__attribute__((noinline)) static void work_chunk(void)
{
	volatile unsigned x = 0;
	for (int i = 0; i < 300000; i++)
		x++;
}

static void *chunker(void *arg)
{
	atomic_store(&tids[atomic_fetch_add(&ntids, 1)], tkm_self_tid());
	int p;
	while ((p = atomic_load(&phase)) < 3) {
		uint64_t a = own_cpu_ns();
		work_chunk();
		uint64_t d = own_cpu_ns() - a;
		int k = atomic_load(&nchunks[p]);
		if (k < 65536 && atomic_load(&phase) == p) {
			chunk_ns[p][k] = d;
			atomic_store(&nchunks[p], k + 1);
		}
	}
	return arg;
}

static int capture_cost(double secs, int by_signal)
{
	char err[256];
	tkm_backend_opts o = {.perf_period_ns = 100000};
	if (tkm_backend_acquire(&o, err, sizeof err) != 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	atomic_store(&phase, 0);
	for (int p = 0; p < 3; p++)
		atomic_store(&nchunks[p], 0);
	pthread_t t;
	start_threads(&t, 1, chunker);
	int64_t tid = atomic_load(&tids[0]);
	tkm_stack st;
	usleep((useconds_t)(secs * 1e6));
	tkm_capture_counts c0, c1;
	if (!by_signal)
		tkm_capture(&tid, 1, &st, 64, TKM_CAPTURE_RECENT); /* sampling on */
	atomic_store(&phase, 1);
	tkm_capture_counts_get(&c0);
	uint64_t t0 = now_ns();
	while (now_ns() - t0 < (uint64_t)(secs * 1e9)) {
		if (by_signal) {
			tkm_capture(&tid, 1, &st, 64, 0);
		} else {
			usleep(2000); /* consume the ring before it fills (no lost samples) */
			tkm_capture(&tid, 1, &st, 64, TKM_CAPTURE_RECENT);
		}
	}
	tkm_capture_counts_get(&c1);
	tkm_capture_quiesce(); /* sampling off */
	atomic_store(&phase, 2);
	usleep((useconds_t)(secs * 1e6));
	atomic_store(&phase, 3);
	pthread_join(t, NULL);
	atomic_store(&ntids, 0);
	tkm_backend_release();
	if (!by_signal && c1.perf_state < 0) {
		printf("perf_event refused\n");
		return 0;
	}
	double med[3];
	for (int p = 0; p < 3; p++) {
		int n = atomic_load(&nchunks[p]);
		qsort(chunk_ns[p], (size_t)n, sizeof chunk_ns[p][0], cmp_u64);
		med[p] = n ? (double)chunk_ns[p][n / 2] : 0;
	}
	double base = (med[0] + med[2]) / 2;
	const char *name = by_signal ? "signal" : "perf";
	printf("%s_chunk_cpu_us off %.2f on %.2f off %.2f\n", name, med[0] / 1e3, med[1] / 1e3, med[2] / 1e3);
	/* captures per chunk: signals sent per chunk run (the chunks ran back to back); samples
	 * per 100 µs of the chunk's CPU */
	int n1 = atomic_load(&nchunks[1]);
	double per_chunk = by_signal ? (n1 ? (double)(c1.signal - c0.signal) / n1 : 0) : med[1] / 100000.0;
	printf("%s_captures_per_chunk %.2f\n", name, per_chunk);
	printf("%s_capture_cost_in_target_us %.2f\n", name, per_chunk > 0 ? (med[1] - base) / per_chunk / 1e3 : 0);
	return 0;
}

static int bench_perfcost(double secs)
{
	return capture_cost(secs, 0) || capture_cost(secs, 1);
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";
	if (strcmp(what, "tick") == 0)
		return bench_tick(argc > 2 ? atoi(argv[2]) : 30, argc > 3 ? atoi(argv[3]) : 2000);
	if (strcmp(what, "stack") == 0)
		return bench_stack(argc > 2 ? atoi(argv[2]) : 2000);
	if (strcmp(what, "overhead") == 0)
		return bench_overhead(argc > 2 ? atof(argv[2]) : 20, argc > 3 ? atof(argv[3]) : 0);
	if (strcmp(what, "eintr") == 0)
		return bench_eintr(argc > 2 ? atoi(argv[2]) : 200);
	if (strcmp(what, "perfcost") == 0)
		return bench_perfcost(argc > 2 ? atof(argv[2]) : 2);
	fprintf(stderr, "usage: bench_monitor tick|stack|overhead|eintr|perfcost [args]\n");
	return 2;
}
