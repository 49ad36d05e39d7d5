/*
 * The monitor core: configuration, the CPU-trace and hang-watchdog threads, and the sinks (Records
 * file, callback). Portable C + pthreads; the OS specifics are behind monitor/backend.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tracekit/monitor.h"

#include "backend.h"
#include "internal.h"

/* A record being built while a high load or a hang lasts; guarded by tk_monitor.lock. */
typedef struct living {
	bool active;
	double start_unix;
	uint64_t start_mono;
	double duration_s;
	/* CPU */
	uint64_t cpu_ns, wall_ns; /* consumed / elapsed over the high-load windows */
	/* hang */
	int64_t tid;
	char thread[64];
	long syscall_nr; /* hang: where the blocked thread waited in the kernel at detection */
	char wchan[64];
	char *threads_json; /* all threads at detection */
	uint32_t suppressed;
	uint32_t unsampled; /* stacks we tried to take and could not (the thread blocks our signal …) */
	tkm_tree tree;
} living;

struct tk_monitor {
	tk_monitor_config cfg;
	char *dir;
	int id; /* registry id, for pings that outlive the monitor */
	pid_t owner_pid;
	pthread_mutex_t lock; /* living records, the file, stopping */
	pthread_cond_t cond;  /* CLOCK_MONOTONIC; wakes threads on stop / answered ping */
	bool stopping;
	tkm_fd records;                    /* the Records file (O_APPEND), checked before each use: see fd.c */
	unsigned lost_noted;               /* tkm_fd_lost_count() when the session last said so */
	uint64_t appended, compacted_size; /* bytes appended since the file was last compacted, its size then */
	uint64_t images_gen;
	char images_name[64]; /* this run's images file: images-<pid>-<start µs>.json */
	pthread_t cpu_thr, hang_thr;
	bool cpu_started, hang_started;
	_Atomic int64_t cpu_tid, hang_tid;
	living cpu, hang;
	double launch;          /* the launch-time line's value */
	bool fg;                /* in the foreground (tk_monitor_set_foreground; true until told otherwise) */
	uint64_t fg_since, fg_ns; /* mono ns it last came to the foreground; foreground ns before that */
	tkm_outbox *outbox;     /* cfg.upload: finished records waiting for the callback's acknowledgement */
	uint32_t dropped_noted; /* outbox-full events already noted in the records */
	uint32_t put_failures;  /* finished records the outbox could not write at once (held, retried) */
	/* heartbeat / ping state, written by the watched loop */
	_Atomic uint64_t beat_ns;
	_Atomic int busy;
	_Atomic int64_t watched_tid;
	_Atomic uint64_t ping_answered, answer_ns;
	uint64_t ping_seq;
};

/* ---------- configuration ---------- */

void tk_monitor_config_default(tk_monitor_config *c)
{
	*c = (tk_monitor_config){
	    .cpu_enabled = 1,
	    .cpu_interval_ms = 1000,
	    .cpu_high_interval_ms = 300,
	    .cpu_threshold = 80,
	    .thread_threshold = 15,
	    .cpu_duration_ms = 60000,
	    .persist_interval_ms = 5000,
	    .hang_enabled = 0,
	    .hang_threshold_ms = 2000,
	    .hang_sample_interval_ms = 50,
	    .hang_ping_interval_ms = 0,
	    .hang_daily_limit = 100,
	    .max_nodes = 4096,
	    .max_frames = 64,
	    .capture_timeout_ms = 50,
	    .compact_bytes = 1u << 20,
	};
}

static int env_u32(const char *name, uint32_t *out, uint32_t min, uint32_t max, char *err, size_t errlen)
{
	const char *v = getenv(name);
	if (!v || !*v)
		return 0;
	char *end;
	errno = 0;
	unsigned long long x = strtoull(v, &end, 10);
	if (errno || *end || x < min || x > max || v[0] == '-') {
		snprintf(err, errlen, "monitor: %s=%s: expected an integer from %u to %u", name, v, min, max);
		return -1;
	}
	*out = (uint32_t)x;
	return 0;
}

static int env_pct(const char *name, double *out, char *err, size_t errlen)
{
	const char *v = getenv(name);
	if (!v || !*v)
		return 0;
	char *end;
	double x = strtod(v, &end);
	if (*end || !isfinite(x) || x <= 0 || x > 100000) {
		snprintf(err, errlen, "monitor: %s=%s: expected a percentage above 0", name, v);
		return -1;
	}
	*out = x;
	return 0;
}

int tk_monitor_config_from_env(tk_monitor_config *c, char *err, size_t errlen)
{
	const char *dir = getenv("TK_MONITOR_DIR");
	if (dir && *dir)
		c->dir = dir;
	uint32_t sig = (uint32_t)c->signal;
	if (env_u32("TK_MONITOR_CPU_INTERVAL_MS", &c->cpu_interval_ms, 1, 3600000, err, errlen) ||
	    env_u32("TK_MONITOR_CPU_HIGH_INTERVAL_MS", &c->cpu_high_interval_ms, 1, 3600000, err, errlen) ||
	    env_pct("TK_MONITOR_CPU_THRESHOLD", &c->cpu_threshold, err, errlen) ||
	    env_pct("TK_MONITOR_THREAD_THRESHOLD", &c->thread_threshold, err, errlen) ||
	    env_u32("TK_MONITOR_CPU_DURATION_MS", &c->cpu_duration_ms, 0, 86400000, err, errlen) ||
	    env_u32("TK_MONITOR_PERSIST_INTERVAL_MS", &c->persist_interval_ms, 1, 3600000, err, errlen) ||
	    env_u32("TK_MONITOR_MAX_NODES", &c->max_nodes, 1, 100000000, err, errlen) ||
	    env_u32("TK_MONITOR_MAX_FRAMES", &c->max_frames, 1, TKM_MAX_FRAMES, err, errlen) ||
	    env_u32("TK_MONITOR_SIGNAL", &sig, 1, 128, err, errlen) ||
	    env_u32("TK_MONITOR_CAPTURE_TIMEOUT_MS", &c->capture_timeout_ms, 1, 10000, err, errlen))
		return -1;
	c->signal = (int)sig;
	const char *perf = getenv("TK_MONITOR_PERF");
	if (perf && *perf) {
		if (strcmp(perf, "0") == 0)
			c->no_perf = 1;
		else if (strcmp(perf, "1") == 0)
			c->no_perf = 0;
		else {
			snprintf(err, errlen, "monitor: TK_MONITOR_PERF=%s: expected 0 or 1", perf);
			return -1;
		}
	}
	const char *clk = getenv("TK_MONITOR_THREAD_CPU");
	if (clk && *clk) {
		if (strcmp(clk, "schedstat") == 0)
			c->use_schedstat = 1;
		else if (strcmp(clk, "clock") == 0)
			c->use_schedstat = 0;
		else {
			snprintf(err, errlen, "monitor: TK_MONITOR_THREAD_CPU=%s: expected clock or schedstat", clk);
			return -1;
		}
	}
	return 0;
}

static int check_config(const tk_monitor_config *c, char *err, size_t errlen)
{
	if (c->cpu_enabled && (c->cpu_interval_ms == 0 || c->cpu_high_interval_ms == 0 || c->persist_interval_ms == 0))
		return snprintf(err, errlen, "monitor: CPU intervals must be positive"), -1;
	if (c->cpu_enabled && !(c->cpu_threshold > 0 && c->thread_threshold >= 0))
		return snprintf(err, errlen, "monitor: cpu_threshold must be > 0 and thread_threshold >= 0"), -1;
	if (c->hang_enabled && (c->hang_threshold_ms == 0 || c->hang_sample_interval_ms == 0))
		return snprintf(err, errlen, "monitor: hang threshold and sample interval must be positive"), -1;
	if (c->max_nodes == 0 || c->max_frames == 0)
		return snprintf(err, errlen, "monitor: max_nodes and max_frames must be positive"), -1;
	if (!c->dir && !c->callback)
		return snprintf(err, errlen, "monitor: no sink: set dir (TK_MONITOR_DIR) or a callback"), -1;
	if (c->upload && !c->dir)
		return snprintf(err, errlen,
		                "monitor: upload needs dir: records wait in DIR/outbox until acknowledged"),
		       -1;
	return 0;
}

/* ---------- registry: lets a ping posted to a loop find its monitor, or learn it is gone ---------- */

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static bool fg_state = true; /* tk_monitor_set_foreground's last word, for monitors started later */
static tk_monitor **reg;
static size_t reg_n;
static int reg_next_id = 1;

/* After fork() the child has none of the monitors' threads and never records (tk_monitor_stop and
 * flush check the pid); it must not hold their Records files open either, as a prefork server's
 * workers would for hours. reg_lock is held across fork so the list is consistent in the child. */
static void fork_prepare(void)
{
	pthread_mutex_lock(&reg_lock);
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&reg_lock);
}

static void fork_child(void)
{
	for (size_t i = 0; i < reg_n; i++)
		tkm_fd_close(&reg[i]->records); /* fstat + close: async-signal-safe */
	pthread_mutex_unlock(&reg_lock);
}

static void register_fork(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

static void reg_add(tk_monitor *m)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, register_fork);
	pthread_mutex_lock(&reg_lock);
	tk_monitor **p = realloc(reg, (reg_n + 1) * sizeof *p);
	m->id = reg_next_id++;
	if (p) {
		reg = p;
		reg[reg_n++] = m;
	}
	pthread_mutex_unlock(&reg_lock);
}

static void reg_remove(tk_monitor *m)
{
	pthread_mutex_lock(&reg_lock);
	for (size_t i = 0; i < reg_n; i++)
		if (reg[i] == m) {
			reg[i] = reg[--reg_n];
			break;
		}
	pthread_mutex_unlock(&reg_lock);
}

/* ---------- time ---------- */

/* One timed wait on a condition variable (holding its lock) until the backend's monotonic time
 * `until`. Linux: an absolute CLOCK_MONOTONIC deadline (the condition variable must be set to that
 * clock, the same one as tkm_mono_ns). Darwin has no pthread_condattr_setclock: a relative wait. */
void tkm_cond_wait_until(pthread_cond_t *c, pthread_mutex_t *l, uint64_t until)
{
#if defined(__APPLE__)
	uint64_t now = tkm_mono_ns();
	uint64_t rel = until > now ? until - now : 0;
	struct timespec ts = {(time_t)(rel / 1000000000u), (long)(rel % 1000000000u)};
	pthread_cond_timedwait_relative_np(c, l, &ts);
#else
	struct timespec ts = {(time_t)(until / 1000000000u), (long)(until % 1000000000u)};
	pthread_cond_timedwait(c, l, &ts);
#endif
}

void tkm_cond_init_mono(pthread_cond_t *c)
{
#if defined(__APPLE__)
	pthread_cond_init(c, NULL);
#else
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(c, &ca);
	pthread_condattr_destroy(&ca);
#endif
}

static void cond_wait_until(tk_monitor *m, uint64_t until)
{
	tkm_cond_wait_until(&m->cond, &m->lock, until);
}

/* Wait (holding m->lock) until the monotonic time `until` or stop. Returns true when stopping. */
static bool wait_until(tk_monitor *m, uint64_t until)
{
	while (!m->stopping && tkm_mono_ns() < until)
		cond_wait_until(m, until);
	return m->stopping;
}

/* One wait (holding m->lock) that also returns on a broadcast (an answered ping). */
static void wait_once(tk_monitor *m, uint64_t until)
{
	if (m->stopping || tkm_mono_ns() >= until)
		return;
	cond_wait_until(m, until);
}

/* ---------- sinks ---------- */

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Write text to dir/name through a temporary file renamed into place. Returns 0 or -1. */
static int write_replace(tk_monitor *m, const char *name, const char *text)
{
	size_t len = strlen(m->dir) + strlen(name) + 48;
	char *tmp = malloc(len), *dst = malloc(len);
	int rc = -1;
	if (tmp && dst) {
		snprintf(tmp, len, "%s/.%s.%d.tmp", m->dir, name, (int)getpid());
		snprintf(dst, len, "%s/%s", m->dir, name);
		tkm_fd f;
		if (tkm_fd_open(&f, tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644) == 0) {
			rc = tkm_fd_ours(&f) ? write_all(f.fd, text, strlen(text)) : -1;
			if (rc == 0 && !tkm_fd_ours(&f))
				rc = -1;
			tkm_fd_close(&f);
			if (rc == 0 && rename(tmp, dst) != 0)
				rc = -1;
			if (rc != 0)
				unlink(tmp);
		}
	}
	free(tmp);
	free(dst);
	return rc;
}

/* The loaded images, in this run's own file (named by every record it writes, so a session reused by
 * later runs still resolves this run's addresses) and in images.json (the latest run, for readers
 * that predate per-run files). */
static void write_images(tk_monitor *m)
{
	if (!m->dir)
		return;
	uint64_t gen = 0;
	char *json = tkm_images_json(&gen);
	if (!json)
		return;
	if (write_replace(m, m->images_name, json) == 0 && write_replace(m, "images.json", json) == 0)
		m->images_gen = gen;
	free(json);
}

/* Write "collection,key,value\n" lines in one write(2) to an O_APPEND file, so a reader never sees
 * half a record from us. Caller holds m->lock. */
/* Rewrite `records` keeping the last line of each (collection, key) (see compact.c), through a
 * temporary file renamed into place so a reader sees the old or the new file, never a mix. Caller
 * holds m->lock. */
static void compact_records(tk_monitor *m)
{
	size_t len = strlen(m->dir) + 48;
	char *path = malloc(len), *tmp = malloc(len), *text = NULL;
	tkm_buf out = {0};
	tkm_fd in = {-1, 0, 0}, w = {-1, 0, 0}, nf;
	if (!path || !tmp)
		goto done;
	snprintf(path, len, "%s/records", m->dir);
	snprintf(tmp, len, "%s/.records.%d.tmp", m->dir, (int)getpid());
	struct stat st;
	if (tkm_fd_open(&in, path, O_RDONLY, 0) != 0 || fstat(in.fd, &st) != 0 ||
	    !(text = malloc((size_t)st.st_size + 1)))
		goto done;
	size_t got = 0;
	while (got < (size_t)st.st_size && tkm_fd_ours(&in)) {
		ssize_t r = read(in.fd, text + got, (size_t)st.st_size - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	if (got != (size_t)st.st_size)
		goto done;
	tkm_fd_close(&in);
	if (tkm_records_compact(text, got, &out) != 0)
		goto done;
	if (tkm_fd_open(&w, tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644) != 0)
		goto done;
	int rc = tkm_fd_ours(&w) ? write_all(w.fd, out.p ? out.p : "", out.n) : -1;
	if (rc == 0 && !tkm_fd_ours(&w))
		rc = -1;
	tkm_fd_close(&w);
	if (rc != 0 || rename(tmp, path) != 0) {
		unlink(tmp);
		goto done;
	}
	if (tkm_fd_open(&nf, path, O_WRONLY | O_APPEND, 0) == 0) {
		tkm_fd_close(&m->records);
		m->records = nf;
	}
	m->compacted_size = out.n;
done:
	m->appended = 0; /* success or not, try again only after as much again */
	tkm_fd_close(&in);
	tkm_buf_free(&out);
	free(text);
	free(path);
	free(tmp);
}

/* Make sure the Records descriptor is still ours before writing: the program may have closed it or
 * put its own file on that number. Then reopen it (O_APPEND, never created again: a deleted
 * session stays deleted) and, once per change, note in the session that descriptors were lost.
 * Returns false when there is nowhere to write. Caller holds m->lock. */
static bool records_ready(tk_monitor *m)
{
	if (!m->dir)
		return false;
	if (!tkm_fd_ours(&m->records)) {
		size_t len = strlen(m->dir) + 16;
		char *path = malloc(len);
		if (path) {
			snprintf(path, len, "%s/records", m->dir);
			tkm_fd_open(&m->records, path, O_WRONLY | O_APPEND, 0);
			free(path);
		}
		if (m->records.fd < 0)
			return false;
	}
	unsigned lost = tkm_fd_lost_count();
	if (lost != m->lost_noted) {
		char line[512];
		double t = tkm_unix_now();
		int k = snprintf(
		    line, sizeof line,
		    "monitor-event,%.6f,{\"time\":%.6f,\"event\":\"descriptors-lost\",\"count\":%u,"
		    "\"message\":\"the program closed or replaced %u of the monitor's descriptors; the monitor "
		    "reopened its own and never used theirs\"}\n",
		    t, t, lost, lost);
		if (k > 0 && (size_t)k < sizeof line && tkm_fd_ours(&m->records) &&
		    write_all(m->records.fd, line, (size_t)k) == 0)
			m->lost_noted = lost;
	}
	return tkm_fd_ours(&m->records);
}

static void append_lines(tk_monitor *m, const char *text, size_t n)
{
	if (!records_ready(m))
		return;
	if (tkm_images_generation() != m->images_gen)
		write_images(m); /* a library was loaded since: its frames must be symbolizable */
	if (!tkm_fd_ours(&m->records))
		return;
	write_all(m->records.fd, text, n);
	m->appended += n;
	uint64_t limit = m->cfg.compact_bytes > m->compacted_size ? m->cfg.compact_bytes : m->compacted_size;
	if (m->cfg.compact_bytes && m->appended > limit)
		compact_records(m);
}

typedef struct emitted {
	tk_monitor_event ev;
	tkm_buf lines, key, record, tree;
} emitted;

static void emitted_free(emitted *e)
{
	tkm_buf_free(&e->lines);
	tkm_buf_free(&e->key);
	tkm_buf_free(&e->record);
	tkm_buf_free(&e->tree);
}

/* Build the two Records lines of a living record. Caller holds m->lock. */
static void build_cpu(tk_monitor *m, bool live, emitted *e)
{
	living *l = &m->cpu;
	double avg = l->wall_ns ? 100.0 * (double)l->cpu_ns / (double)l->wall_ns : 0;
	tkm_buf_printf(&e->key, "%.2f", l->start_unix - TKM_CF_EPOCH);
	tkm_buf_printf(&e->record,
	               "{\"start\":\"%s\",\"lasting\":\"%.2f\",\"average\":\"%.2f\",\"live\":%s,\"samples\":%u%s",
	               e->key.p, l->duration_s, avg, live ? "true" : "false", l->tree.samples,
	               l->tree.truncated ? ",\"truncated\":true" : "");
	if (l->unsampled)
		tkm_buf_printf(&e->record, ",\"unsampled\":%u", l->unsampled);
	if (m->dir)
		tkm_buf_printf(&e->record, ",\"images\":\"%s\"", m->images_name);
	tkm_buf_put(&e->record, "}", 1);
	tkm_tree_json(&l->tree, &e->tree);
	tkm_buf_printf(&e->lines, "cpu-highload,%s,%s\ncpu-highload-stackframe,%s,%s\n", e->key.p, e->record.p,
	               e->key.p, e->tree.p);
	e->ev = (tk_monitor_event){.kind = TK_MONITOR_CPU_HIGHLOAD,
	                           .live = live,
	                           .start_unix = l->start_unix,
	                           .duration_s = l->duration_s,
	                           .average_cpu = avg,
	                           .samples = l->tree.samples,
	                           .unsampled = l->unsampled,
	                           .truncated = l->tree.truncated};
}

static void build_hang(tk_monitor *m, bool live, emitted *e)
{
	living *l = &m->hang;
	tkm_buf_printf(&e->key, "%.3f", l->start_unix);
	tkm_buf_printf(&e->record, "{\"start\":%.3f,\"duration_ms\":%.0f,\"threshold_ms\":%u,\"tid\":%lld,\"thread\":",
	               l->start_unix, l->duration_s * 1000.0, m->cfg.hang_threshold_ms, (long long)l->tid);
	tkm_buf_json_str(&e->record, l->thread);
	if (m->dir)
		tkm_buf_printf(&e->record, ",\"images\":\"%s\"", m->images_name);
	if (l->unsampled)
		tkm_buf_printf(&e->record, ",\"unsampled\":%u", l->unsampled);
	if (l->syscall_nr >= -1) {
		tkm_buf_printf(&e->record, ",\"blocked_in\":{\"syscall\":%ld,\"wchan\":", l->syscall_nr);
		tkm_buf_json_str(&e->record, l->wchan);
		tkm_buf_put(&e->record, "}", 1);
	}
	tkm_buf_printf(&e->record, ",\"samples\":%u,\"live\":%s,\"suppressed\":%u%s,\"threads\":%s}", l->tree.samples,
	               live ? "true" : "false", l->suppressed, l->tree.truncated ? ",\"truncated\":true" : "",
	               l->threads_json ? l->threads_json : "[]");
	tkm_tree_json(&l->tree, &e->tree);
	tkm_buf_printf(&e->lines, "hang,%s,%s\nhang-stackframe,%s,%s\n", e->key.p, e->record.p, e->key.p, e->tree.p);
	e->ev = (tk_monitor_event){.kind = TK_MONITOR_HANG,
	                           .live = live,
	                           .start_unix = l->start_unix,
	                           .duration_s = l->duration_s,
	                           .tid = l->tid,
	                           .samples = l->tree.samples,
	                           .unsampled = l->unsampled,
	                           .truncated = l->tree.truncated,
	                           .suppressed = l->suppressed};
}

/* A finished record goes to the outbox as a Records text of its own: the header, this run's
 * launch-time (with images.json's pid and process it makes the same session key as the whole
 * session) and the record's lines (a record's two, or the run's final foreground line). Caller
 * holds m->lock. */
static void queue_upload(tk_monitor *m, const tkm_buf *lines)
{
	tkm_buf t = {0};
	tkm_buf_printf(&t, "collection,key,value\nlaunch-time,%.6f,%.6f\n", m->launch, m->launch);
	tkm_buf_put(&t, lines->p, lines->n);
	int put = t.oom ? -1 : tkm_outbox_put(m->outbox, m->dir, t.p, t.n, m->images_name);
	if (put < 0 && !t.oom && records_ready(m)) {
		/* not in the outbox yet (a full disk, a broken outbox): held and retried by the uploader */
		char line[400];
		double now = tkm_unix_now();
		int errsv = errno;
		int k = snprintf(line, sizeof line,
		                 "monitor-event,%.6f,{\"time\":%.6f,\"event\":\"upload-queue-error\",\"count\":%u,"
		                 "\"message\":\"a finished record could not be written to the outbox (%s): kept in "
		                 "memory and written again with back-off; it is in this file too\"}\n",
		                 now, now, ++m->put_failures, strerror(errsv));
		if (k > 0 && (size_t)k < sizeof line && tkm_fd_ours(&m->records))
			(void)write_all(m->records.fd, line, (size_t)k);
	}
	if (put == 1) {
		uint32_t dropped = tkm_outbox_dropped(m->outbox);
		if (dropped != m->dropped_noted && records_ready(m)) {
			char line[400];
			double now = tkm_unix_now();
			int k =
			    snprintf(line, sizeof line,
			             "monitor-event,%.6f,{\"time\":%.6f,\"event\":\"upload-queue-full\",\"count\":%u,"
			             "\"message\":\"%u finished record(s) not queued for upload: the outbox is over "
			             "upload_max_queued_bytes; they are in this file (tracekit upload sends it)\"}\n",
			             now, now, dropped, dropped);
			if (k > 0 && (size_t)k < sizeof line && tkm_fd_ours(&m->records) &&
			    write_all(m->records.fd, line, (size_t)k) == 0)
				m->dropped_noted = dropped;
		}
	}
	tkm_buf_free(&t);
}

/* ---------- foreground time ---------- */

/* Foreground seconds so far. Caller holds m->lock. */
static double fg_seconds(const tk_monitor *m)
{
	uint64_t ns = m->fg_ns;
	if (m->fg) {
		uint64_t now = tkm_mono_ns();
		ns += now > m->fg_since ? now - m->fg_since : 0;
	}
	return (double)ns / 1e9;
}

/* The run's foreground line (docs/records-format.md): rewritten live by flushes, final at stop. The
 * final one is queued in the outbox like a finished record (acknowledged on its own, kept until
 * then), so an uploaded run's foreground time reaches the store as the session directory's does:
 * `tracekit monitor --upload` sends it at exit, an app's uploader with the next run. Caller holds
 * m->lock. */
static void persist_foreground(tk_monitor *m, bool live)
{
	tkm_buf b = {0};
	tkm_buf_printf(&b, "foreground,%.6f,{\"seconds\":%.3f,\"live\":%s,\"pid\":%d}\n", m->launch, fg_seconds(m),
	               live ? "true" : "false", (int)getpid());
	if (!b.oom)
		append_lines(m, b.p, b.n);
	if (!live && m->outbox && !b.oom)
		queue_upload(m, &b);
	tkm_buf_free(&b);
}

static void fg_set(tk_monitor *m, bool foreground)
{
	if (foreground == m->fg)
		return;
	uint64_t now = tkm_mono_ns();
	if (m->fg)
		m->fg_ns += now > m->fg_since ? now - m->fg_since : 0;
	m->fg = foreground;
	m->fg_since = now;
}

void tk_monitor_set_foreground(bool foreground)
{
	pthread_mutex_lock(&reg_lock);
	fg_state = foreground;
	for (size_t i = 0; i < reg_n; i++) {
		pthread_mutex_lock(&reg[i]->lock);
		fg_set(reg[i], foreground);
		pthread_mutex_unlock(&reg[i]->lock);
	}
	pthread_mutex_unlock(&reg_lock);
}

/* Persist a living record: write it (under the lock), then call back (outside it, so the callback
 * may call into the monitor). Called with m->lock held; returns with it held. */
static void persist(tk_monitor *m, living *l, bool live)
{
	if (!l->active)
		return;
	emitted e = {0};
	if (l == &m->cpu)
		build_cpu(m, live, &e);
	else
		build_hang(m, live, &e);
	if (!e.lines.oom)
		append_lines(m, e.lines.p, e.lines.n);
	if (!live && m->outbox && !e.lines.oom)
		queue_upload(m, &e.lines);
	if (m->cfg.callback && !e.lines.oom) {
		e.ev.key = e.key.p;
		e.ev.record = e.record.p;
		e.ev.tree = e.tree.p;
		pthread_mutex_unlock(&m->lock);
		m->cfg.callback(&e.ev, m->cfg.callback_ctx);
		pthread_mutex_lock(&m->lock);
	}
	emitted_free(&e);
}

static int open_session(tk_monitor *m, char *err, size_t errlen)
{
	if (!m->dir)
		return 0;
	if (mkdir(m->dir, 0755) != 0 && errno != EEXIST) {
		snprintf(err, errlen, "monitor: %s: cannot create the session directory: %s", m->dir, strerror(errno));
		return -1;
	}
	snprintf(m->images_name, sizeof m->images_name, "images-%d-%.0f.json", (int)getpid(), tkm_unix_now() * 1e6);
	size_t len = strlen(m->dir) + 16;
	char *path = malloc(len);
	if (!path)
		return snprintf(err, errlen, "monitor: out of memory"), -1;
	snprintf(path, len, "%s/records", m->dir);
	if (tkm_fd_open(&m->records, path, O_WRONLY | O_CREAT | O_APPEND, 0644) != 0) {
		snprintf(err, errlen, "monitor: %s: %s", path, strerror(errno));
		free(path);
		return -1;
	}
	free(path);
	struct stat st;
	tkm_buf b = {0};
	if (fstat(m->records.fd, &st) == 0 && st.st_size == 0)
		tkm_buf_puts(&b, "collection,key,value\n");
	double launch = tkm_process_start_unix();
	if (launch <= 0)
		launch = tkm_unix_now();
	m->launch = launch;
	tkm_buf_printf(&b, "launch-time,%.6f,%.6f\n", launch, launch);
	if (!b.oom && write_all(m->records.fd, b.p, b.n) != 0) {
		snprintf(err, errlen, "monitor: %s/records: %s", m->dir, strerror(errno));
		tkm_buf_free(&b);
		return -1;
	}
	tkm_buf_free(&b);
	write_images(m);
	return 0;
}

/* ---------- CPU trace ---------- */

static bool own_thread(tk_monitor *m, int64_t tid)
{
	return tid == atomic_load(&m->cpu_tid) || tid == atomic_load(&m->hang_tid) ||
	       (m->outbox && tid == tkm_outbox_tid(m->outbox));
}

/* Threads above the share threshold, from two sorted snapshots of cumulative CPU. */
static size_t pick_busy(tk_monitor *m, const tkm_thread_list *prev, const tkm_thread_list *cur, int64_t **tids,
                        size_t *cap)
{
	uint64_t total = 0;
	size_t i = 0;
	for (size_t j = 0; j < cur->n; j++) {
		while (i < prev->n && prev->v[i].tid < cur->v[j].tid)
			i++;
		if (i < prev->n && prev->v[i].tid == cur->v[j].tid && cur->v[j].cpu_ns > prev->v[i].cpu_ns)
			total += cur->v[j].cpu_ns - prev->v[i].cpu_ns;
	}
	if (total == 0)
		return 0;
	size_t n = 0;
	i = 0;
	for (size_t j = 0; j < cur->n; j++) {
		while (i < prev->n && prev->v[i].tid < cur->v[j].tid)
			i++;
		if (!(i < prev->n && prev->v[i].tid == cur->v[j].tid) || cur->v[j].cpu_ns <= prev->v[i].cpu_ns)
			continue; /* new thread: no delta yet */
		double share = 100.0 * (double)(cur->v[j].cpu_ns - prev->v[i].cpu_ns) / (double)total;
		if (share <= m->cfg.thread_threshold || own_thread(m, cur->v[j].tid))
			continue;
		if (n == *cap) {
			size_t nc = *cap ? *cap * 2 : 16;
			int64_t *p = realloc(*tids, nc * sizeof *p);
			if (!p)
				break;
			*tids = p;
			*cap = nc;
		}
		(*tids)[n++] = cur->v[j].tid;
	}
	return n;
}

static void set_thread_name(const char *name)
{
#if defined(__APPLE__)
	pthread_setname_np(name); /* Darwin names only the calling thread */
#else
	pthread_setname_np(pthread_self(), name);
#endif
}

static void *cpu_main(void *arg)
{
	tk_monitor *m = arg;
	set_thread_name("tk-monitor-cpu");
	atomic_store(&m->cpu_tid, tkm_self_tid());
	tkm_thread_list prev = {0}, cur = {0};
	int64_t *tids = NULL;
	size_t tids_cap = 0;
	tkm_stack *stacks = NULL;
	size_t stacks_cap = 0;
	bool high = false, have_prev = false;
	uint64_t last_wall = tkm_mono_ns(), last_cpu = tkm_process_cpu_ns(), last_persist = 0;
	uint64_t interval = (uint64_t)m->cfg.cpu_interval_ms * 1000000u;
	const uint64_t duration = (uint64_t)m->cfg.cpu_duration_ms * 1000000u;
	const uint64_t persist_every = (uint64_t)m->cfg.persist_interval_ms * 1000000u;

	pthread_mutex_lock(&m->lock);
	while (!wait_until(m, last_wall + interval)) {
		pthread_mutex_unlock(&m->lock);
		uint64_t now = tkm_mono_ns(), cpu = tkm_process_cpu_ns();
		uint64_t dt = now - last_wall, dc = cpu > last_cpu ? cpu - last_cpu : 0;
		double usage = dt ? 100.0 * (double)dc / (double)dt : 0;
		size_t nbusy = 0;
		if (usage >= m->cfg.cpu_threshold) {
			if (!high) {
				/* the window just measured is the first of the high load */
				high = true;
				have_prev = tkm_threads_cpu(&prev) == 0;
				pthread_mutex_lock(&m->lock);
				tkm_tree_reset(&m->cpu.tree);
				m->cpu.start_mono = last_wall;
				m->cpu.start_unix = tkm_unix_now() - (double)dt / 1e9;
				m->cpu.cpu_ns = m->cpu.wall_ns = 0;
				m->cpu.unsampled = 0;
				m->cpu.active = false;
				pthread_mutex_unlock(&m->lock);
				interval = (uint64_t)m->cfg.cpu_high_interval_ms * 1000000u;
			} else if (tkm_threads_cpu(&cur) == 0) {
				if (have_prev)
					nbusy = pick_busy(m, &prev, &cur, &tids, &tids_cap);
				tkm_thread_list t = prev;
				prev = cur;
				cur = t;
				have_prev = true;
			}
			if (nbusy > stacks_cap) {
				tkm_stack *s = realloc(stacks, nbusy * sizeof *s);
				if (s) {
					stacks = s;
					stacks_cap = nbusy;
				} else {
					nbusy = stacks_cap;
				}
			}
			if (nbusy)
				tkm_capture(tids, nbusy, stacks, (int)m->cfg.max_frames,
				            TKM_CAPTURE_GENTLE | TKM_CAPTURE_RECENT);
			pthread_mutex_lock(&m->lock);
			for (size_t i = 0; i < nbusy; i++)
				if (stacks[i].status == TKM_STACK_OK || stacks[i].status == TKM_STACK_CACHED)
					tkm_tree_add(&m->cpu.tree, stacks[i].frames, stacks[i].n);
				else if (stacks[i].status != TKM_STACK_GONE)
					m->cpu.unsampled++;
			m->cpu.cpu_ns += dc;
			m->cpu.wall_ns += dt;
			m->cpu.duration_s = (double)(now - m->cpu.start_mono) / 1e9;
			if (now - m->cpu.start_mono >= duration &&
			    (!m->cpu.active || now - last_persist >= persist_every)) {
				m->cpu.active = true;
				last_persist = now;
				persist(m, &m->cpu, true);
			}
			pthread_mutex_unlock(&m->lock);
		} else if (high) {
			pthread_mutex_lock(&m->lock);
			persist(m, &m->cpu, false); /* no-op unless it lasted long enough to be a record */
			m->cpu.active = false;
			pthread_mutex_unlock(&m->lock);
			high = false;
			have_prev = false;
			tkm_capture_quiesce(); /* no more sampling of threads until the next high load */
			interval = (uint64_t)m->cfg.cpu_interval_ms * 1000000u;
		}
		last_wall = now;
		last_cpu = cpu;
		pthread_mutex_lock(&m->lock);
	}
	pthread_mutex_unlock(&m->lock);
	if (high)
		tkm_capture_quiesce();
	free(prev.v);
	free(cur.v);
	free(tids);
	free(stacks);
	return NULL;
}

/* ---------- hang detector ---------- */

static void ping_cb(void *arg)
{
	int id = (int)(intptr_t)arg;
	pthread_mutex_lock(&reg_lock);
	for (size_t i = 0; i < reg_n; i++) {
		tk_monitor *m = reg[i];
		if (m->id != id)
			continue;
		pthread_mutex_lock(&m->lock);
		atomic_store(&m->watched_tid, tkm_self_tid());
		atomic_store(&m->answer_ns, tkm_mono_ns());
		atomic_fetch_add(&m->ping_answered, 1);
		pthread_cond_broadcast(&m->cond);
		pthread_mutex_unlock(&m->lock);
		break;
	}
	pthread_mutex_unlock(&reg_lock);
}

void tk_monitor_heartbeat(tk_monitor *m)
{
	if (!m)
		return;
	atomic_store_explicit(&m->beat_ns, tkm_mono_ns(), memory_order_relaxed);
	if (!atomic_load_explicit(&m->busy, memory_order_relaxed)) {
		atomic_store(&m->watched_tid, tkm_self_tid());
		atomic_store_explicit(&m->busy, 1, memory_order_release);
	}
}

void tk_monitor_idle(tk_monitor *m)
{
	if (!m)
		return;
	atomic_store_explicit(&m->beat_ns, tkm_mono_ns(), memory_order_relaxed);
	atomic_store_explicit(&m->busy, 0, memory_order_release);
}

void tk_monitor_watch_this_thread(tk_monitor *m)
{
	if (m)
		atomic_store(&m->watched_tid, tkm_self_tid());
}

static uint64_t hash_frames(const tkm_stack *s)
{
	uint64_t h = 1469598103934665603ull;
	for (int i = 0; s && i < s->n; i++)
		h = (h ^ s->frames[i]) * 1099511628211ull;
	return h;
}

typedef struct hang_ctx {
	tkm_thread_list list;
	int64_t *tids;
	tkm_stack *stacks;
	size_t cap;
	uint64_t last_sig;
	uint32_t repeats, suppressed, day_count;
	long day;
} hang_ctx;

/* Has the hang that started at `start` ended? Sets *end to its end (monotonic ns). */
static bool hang_ended(tk_monitor *m, uint64_t start, uint64_t ping_seq, uint64_t *end)
{
	if (m->cfg.hang_post) {
		if (atomic_load(&m->ping_answered) >= ping_seq) {
			*end = atomic_load(&m->answer_ns);
			return true;
		}
		return false;
	}
	uint64_t beat = atomic_load(&m->beat_ns);
	if (beat != start || !atomic_load(&m->busy)) {
		*end = beat;
		return true;
	}
	return false;
}

/* All threads' stacks as the `threads` JSON array; also returns the watched thread's stack. */
static char *snapshot_threads(tk_monitor *m, hang_ctx *h, int64_t watched, tkm_stack *blocked)
{
	if (tkm_threads_cpu(&h->list) != 0)
		h->list.n = 0;
	if (h->list.n > h->cap) {
		int64_t *t = realloc(h->tids, h->list.n * sizeof *t);
		if (t)
			h->tids = t;
		tkm_stack *s = realloc(h->stacks, h->list.n * sizeof *s);
		if (s)
			h->stacks = s;
		if (!t || !s)
			return NULL;
		h->cap = h->list.n;
	}
	size_t n = 0;
	/* the watched thread first, as crash reporters put the main thread first */
	for (size_t i = 0; i < h->list.n; i++)
		if (h->list.v[i].tid == watched)
			h->tids[n++] = watched;
	for (size_t i = 0; i < h->list.n; i++)
		if (h->list.v[i].tid != watched && !own_thread(m, h->list.v[i].tid))
			h->tids[n++] = h->list.v[i].tid;
	tkm_capture(h->tids, n, h->stacks, (int)m->cfg.max_frames, TKM_CAPTURE_GENTLE);
	tkm_buf b = {0};
	tkm_buf_put(&b, "[", 1);
	for (size_t i = 0; i < n; i++) {
		const tkm_stack *s = &h->stacks[i];
		char name[64];
		tkm_thread_name(s->tid, name, sizeof name);
		tkm_buf_printf(&b, "%s{\"tid\":%lld,\"name\":", i ? "," : "", (long long)s->tid);
		tkm_buf_json_str(&b, name);
		if (s->status == TKM_STACK_TIMEOUT)
			tkm_buf_puts(&b, ",\"error\":\"timeout\"");
		tkm_buf_puts(&b, ",\"frames\":[");
		for (int k = 0; k < s->n; k++)
			tkm_buf_printf(&b, "%s\"0x%llx\"", k ? "," : "", (unsigned long long)s->frames[k]);
		tkm_buf_puts(&b, "]}");
		if (s->tid == watched && (s->status == TKM_STACK_OK || s->status == TKM_STACK_CACHED))
			*blocked = *s;
	}
	tkm_buf_put(&b, "]", 1);
	if (b.oom) {
		tkm_buf_free(&b);
		return NULL;
	}
	return b.p;
}

/* Called with m->lock held once a hang is detected; returns with it held once the hang is over. */
static void handle_hang(tk_monitor *m, hang_ctx *h, uint64_t start, uint64_t ping_seq)
{
	int64_t watched = atomic_load(&m->watched_tid);
	pthread_mutex_unlock(&m->lock);
	double start_unix = tkm_unix_now() - (double)(tkm_mono_ns() - start) / 1e9;
	tkm_stack *blocked = malloc(sizeof *blocked), *sample = malloc(sizeof *sample);
	if (!blocked || !sample) {
		free(blocked);
		free(sample);
		pthread_mutex_lock(&m->lock);
		return;
	}
	blocked->n = 0;
	long syscall_nr = -2;
	char wchan[64] = "";
	if (watched) /* before the snapshot's signal can interrupt the call */
		tkm_thread_blocked_in(watched, &syscall_nr, wchan, sizeof wchan);
	char *threads = snapshot_threads(m, h, watched, blocked);

	/* back-off on a stack identical to the previous hang's, and the daily cap */
	uint64_t sig = hash_frames(blocked);
	h->repeats = sig == h->last_sig ? h->repeats + 1 : 1;
	h->last_sig = sig;
	long day = (long)floor(start_unix / 86400.0);
	if (day != h->day) {
		h->day = day;
		h->day_count = 0;
	}
	bool report = tkm_backoff_reports(h->repeats) && h->day_count < m->cfg.hang_daily_limit;
	uint64_t end = 0;
	pthread_mutex_lock(&m->lock);
	if (report) {
		living *l = &m->hang;
		tkm_tree_reset(&l->tree);
		free(l->threads_json);
		l->threads_json = threads;
		threads = NULL;
		l->start_unix = start_unix;
		l->start_mono = start;
		l->tid = watched;
		l->thread[0] = 0;
		if (watched)
			tkm_thread_name(watched, l->thread, sizeof l->thread);
		l->suppressed = h->suppressed;
		l->syscall_nr = syscall_nr;
		snprintf(l->wchan, sizeof l->wchan, "%s", wchan);
		l->duration_s = (double)(tkm_mono_ns() - start) / 1e9;
		l->unsampled = 0;
		if (blocked->n)
			tkm_tree_add(&l->tree, blocked->frames, blocked->n);
		else if (watched)
			l->unsampled++;
		l->active = true;
		persist(m, l, true);
		h->day_count++;
		h->suppressed = 0;
	} else {
		h->suppressed++;
	}
	uint64_t step = (uint64_t)m->cfg.hang_sample_interval_ms * 1000000u, next = tkm_mono_ns() + step;
	uint64_t last_persist = tkm_mono_ns();
	while (!hang_ended(m, start, ping_seq, &end)) {
		if (wait_until(m, next))
			break;
		if (hang_ended(m, start, ping_seq, &end))
			break;
		next += step;
		if (!report || !watched)
			continue;
		pthread_mutex_unlock(&m->lock);
		tkm_capture(&watched, 1, sample, (int)m->cfg.max_frames, TKM_CAPTURE_GENTLE);
		pthread_mutex_lock(&m->lock);
		if (sample->status == TKM_STACK_OK || sample->status == TKM_STACK_CACHED)
			tkm_tree_add(&m->hang.tree, sample->frames, sample->n);
		else
			m->hang.unsampled++;
		uint64_t now = tkm_mono_ns();
		m->hang.duration_s = (double)(now - start) / 1e9;
		if (now - last_persist >= 1000000000u) { /* a kill during the hang keeps a record */
			persist(m, &m->hang, true);
			last_persist = now;
		}
	}
	if (report && m->hang.active) {
		if (!end || m->stopping)
			end = tkm_mono_ns();
		m->hang.duration_s = (double)(end - start) / 1e9;
		persist(m, &m->hang, false);
		m->hang.active = false;
	}
	free(threads);
	free(blocked);
	free(sample);
}

static void *hang_main(void *arg)
{
	tk_monitor *m = arg;
	set_thread_name("tk-monitor-hang");
	atomic_store(&m->hang_tid, tkm_self_tid());
	hang_ctx h = {.day = -1};
	const uint64_t threshold = (uint64_t)m->cfg.hang_threshold_ms * 1000000u;
	uint64_t check = threshold / 5;
	if (check > 500000000u)
		check = 500000000u;
	if (check < 1000000u)
		check = 1000000u;
	uint64_t ping_pause =
	    m->cfg.hang_ping_interval_ms ? (uint64_t)m->cfg.hang_ping_interval_ms * 1000000u : threshold / 20;
	pthread_mutex_lock(&m->lock);
	while (!m->stopping) {
		if (!m->cfg.hang_post) {
			uint64_t before = tkm_mono_ns();
			if (wait_until(m, before + check))
				break;
			uint64_t now = tkm_mono_ns();
			if (now - before >= check + threshold)
				continue; /* we were stopped or suspended ourselves: not the loop's fault */
			uint64_t beat = atomic_load(&m->beat_ns);
			if (atomic_load(&m->busy) && beat && now - beat >= threshold)
				handle_hang(m, &h, beat, 0);
			continue;
		}
		uint64_t seq = ++m->ping_seq, posted = tkm_mono_ns();
		pthread_mutex_unlock(&m->lock);
		m->cfg.hang_post(ping_cb, (void *)(intptr_t)m->id, m->cfg.hang_post_ctx);
		pthread_mutex_lock(&m->lock);
		while (!m->stopping && atomic_load(&m->ping_answered) < seq && tkm_mono_ns() < posted + threshold)
			wait_once(m, posted + threshold);
		if (m->stopping)
			break;
		if (atomic_load(&m->ping_answered) >= seq) {
			if (wait_until(m, tkm_mono_ns() + ping_pause))
				break;
			continue;
		}
		handle_hang(m, &h, posted, seq);
		/* pings posted during the hang are answered in a burst when it ends; let them drain */
		while (!m->stopping && atomic_load(&m->ping_answered) < seq)
			wait_once(m, tkm_mono_ns() + check);
		m->ping_seq = atomic_load(&m->ping_answered);
	}
	pthread_mutex_unlock(&m->lock);
	free(h.list.v);
	free(h.tids);
	free(h.stacks);
	return NULL;
}

/* ---------- lifecycle ---------- */

tk_monitor *tk_monitor_start(const tk_monitor_config *cfg, char *err, size_t errlen)
{
	char dummy[8];
	if (!err || !errlen) {
		err = dummy;
		errlen = sizeof dummy;
	}
	err[0] = 0;
	tk_monitor_config c;
	if (cfg)
		c = *cfg;
	else
		tk_monitor_config_default(&c);
	if (c.max_frames > TKM_MAX_FRAMES)
		c.max_frames = TKM_MAX_FRAMES;
	if (check_config(&c, err, errlen) != 0)
		return NULL;
	tk_monitor *m = calloc(1, sizeof *m);
	if (!m)
		return snprintf(err, errlen, "monitor: out of memory"), NULL;
	m->cfg = c;
	m->records.fd = -1;
	m->owner_pid = getpid();
	if (c.dir && !(m->dir = strdup(c.dir))) {
		free(m);
		return snprintf(err, errlen, "monitor: out of memory"), NULL;
	}
	m->cfg.dir = m->dir;
	pthread_mutex_init(&m->lock, NULL);
	tkm_cond_init_mono(&m->cond);
	tkm_tree_init(&m->cpu.tree, c.max_nodes);
	tkm_tree_init(&m->hang.tree, c.max_nodes);
	tkm_backend_opts bo = {.signal = c.signal,
	                       .capture_timeout_ms = c.capture_timeout_ms,
	                       .use_schedstat = c.use_schedstat,
	                       .no_perf = c.no_perf,
	                       /* two samples per high-load tick of a thread busy on a whole core: one
	                        * is fresh at each tick even with jitter, and each costs the thread
	                        * ~15 µs (bench/monitor/RESULTS.md); a thread at less than half a core
	                        * often has none, and gets the signal */
	                       .perf_period_ns =
	                           c.cpu_high_interval_ms > 2 ? (uint64_t)c.cpu_high_interval_ms * 500000u : 1000000u};
	if (tkm_backend_acquire(&bo, err, errlen) != 0)
		goto fail;
	if (open_session(m, err, errlen) != 0) {
		tkm_backend_release();
		goto fail;
	}
	if (c.upload && !(m->outbox = tkm_outbox_start(m->dir, &c, err, errlen))) {
		tkm_backend_release();
		goto fail;
	}
	pthread_mutex_lock(&reg_lock);
	m->fg = fg_state; /* the process's lifetime counts as foreground unless the app says otherwise */
	m->fg_since = tkm_mono_ns();
	pthread_mutex_unlock(&reg_lock);
	reg_add(m);
	int rc = 0;
	/* Our threads are created with every signal blocked: a process-directed signal (SIGTERM, SIGCHLD,
	 * SIGALRM …) must go to a thread of the program, never to ours, where its default action or the
	 * program's handler would run in the wrong thread while the program waits for it in sigwait. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (c.cpu_enabled && (rc = pthread_create(&m->cpu_thr, NULL, cpu_main, m)) == 0)
		m->cpu_started = true;
	if (rc == 0 && c.hang_enabled && (rc = pthread_create(&m->hang_thr, NULL, hang_main, m)) == 0)
		m->hang_started = true;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		snprintf(err, errlen, "monitor: pthread_create: %s", strerror(rc));
		tk_monitor_stop(m);
		return NULL;
	}
	return m;
fail:
	tkm_fd_close(&m->records);
	pthread_mutex_destroy(&m->lock);
	pthread_cond_destroy(&m->cond);
	tkm_tree_free(&m->cpu.tree);
	tkm_tree_free(&m->hang.tree);
	free(m->dir);
	free(m);
	return NULL;
}

void tk_monitor_flush(tk_monitor *m)
{
	if (!m || getpid() != m->owner_pid)
		return;
	pthread_mutex_lock(&m->lock);
	persist(m, &m->cpu, true);
	persist(m, &m->hang, true);
	persist_foreground(m, true);
	pthread_mutex_unlock(&m->lock);
}

void tk_monitor_stop(tk_monitor *m)
{
	if (!m)
		return;
	/* In a forked child the monitor's threads do not exist: nothing to join, nothing to persist
	 * (the parent owns the records); leak the few bytes rather than touch the parent's state. */
	if (getpid() != m->owner_pid)
		return;
	reg_remove(m);
	pthread_mutex_lock(&m->lock);
	m->stopping = true;
	pthread_cond_broadcast(&m->cond);
	pthread_mutex_unlock(&m->lock);
	if (m->cpu_started)
		pthread_join(m->cpu_thr, NULL);
	if (m->hang_started)
		pthread_join(m->hang_thr, NULL);
	pthread_mutex_lock(&m->lock);
	persist(m, &m->cpu, false); /* the living record, final: the process or the monitor is ending */
	persist(m, &m->hang, false);
	persist_foreground(m, false); /* the run's foreground seconds, final (hang rate) */
	if (tkm_fd_lost_count() != m->lost_noted)
		records_ready(m); /* say so even when no record was written since */
	pthread_mutex_unlock(&m->lock);
	/* after the last records are queued: they wait on disk for the next run's uploader */
	tkm_outbox_stop(m->outbox);
	tkm_backend_release();
	tkm_fd_close(&m->records);
	tkm_tree_free(&m->cpu.tree);
	tkm_tree_free(&m->hang.tree);
	free(m->hang.threads_json);
	pthread_mutex_destroy(&m->lock);
	pthread_cond_destroy(&m->cond);
	free(m->dir);
	free(m);
}
