/*
 * The outbox: finished records kept on disk as upload bundles (the format `tracekit serve --ingest`
 * takes, docs/store.md) until the host's upload callback acknowledges them, sent from a thread of
 * our own with exponential back-off and jitter. Portable C + pthreads; no networking here (the
 * callback owns it: the app's URLSession on iOS, tk_monitor_http_upload on Linux).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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

struct tkm_outbox {
	char *dir; /* DIR/outbox */
	tk_monitor_upload_fn fn;
	void *ctx;
	uint32_t retry_ms, retry_max_ms;
	uint64_t max_bytes;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stopping, kicked;
	pthread_t thr;
	bool started;
	_Atomic int64_t tid;
	uint64_t rng;
	/* bundles that could not be written (a full disk, a broken outbox): kept here, oldest first, and
	 * written by the next put, the uploader's next attempt or tk_monitor_stop */
	pthread_mutex_t hold_lock;
	tkm_buf *held;
	size_t nheld;
	uint64_t held_bytes;
	/* guarded by lock */
	uint32_t dropped;
	uint64_t acked, retries, rejected;
};

/* ---- gzip without zlib: stored deflate blocks and a CRC-32 (RFC 1951 §3.2.4, RFC 1952) ----
 * The monitor links nothing but libc; the records are small and the network is not ours to save. */

static uint32_t crc32_update(uint32_t crc, const unsigned char *p, size_t n)
{
	static uint32_t table[256];
	static _Atomic int ready;
	if (!atomic_load(&ready)) { /* two threads racing here write the same values */
		for (uint32_t i = 0; i < 256; i++) {
			uint32_t c = i;
			for (int k = 0; k < 8; k++)
				c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
			table[i] = c;
		}
		atomic_store(&ready, 1);
	}
	crc = ~crc;
	for (size_t i = 0; i < n; i++)
		crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
	return ~crc;
}

int tkm_gzip_stored(const void *data, size_t n, tkm_buf *out)
{
	const unsigned char *p = data;
	static const unsigned char head[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff};
	tkm_buf_put(out, (const char *)head, sizeof head);
	size_t at = 0;
	do {
		size_t k = n - at > 65535 ? 65535 : n - at;
		unsigned char b[5] = {at + k == n ? 1 : 0, (unsigned char)(k & 0xff), (unsigned char)(k >> 8),
		                      (unsigned char)(~k & 0xff), (unsigned char)((~k >> 8) & 0xff)};
		tkm_buf_put(out, (const char *)b, sizeof b);
		tkm_buf_put(out, (const char *)p + at, k);
		at += k;
	} while (at < n);
	uint32_t crc = crc32_update(0, p, n), len = (uint32_t)n;
	unsigned char tail[8] = {(unsigned char)crc,         (unsigned char)(crc >> 8), (unsigned char)(crc >> 16),
	                         (unsigned char)(crc >> 24), (unsigned char)len,        (unsigned char)(len >> 8),
	                         (unsigned char)(len >> 16), (unsigned char)(len >> 24)};
	tkm_buf_put(out, (const char *)tail, sizeof tail);
	return out->oom ? -1 : 0;
}

/* ---- files ---- */

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* A small file read whole (records' images, meta.json, a bundle). NULL if missing or unreadable. */
static char *slurp(const char *path, size_t *n)
{
	tkm_fd f;
	if (tkm_fd_open(&f, path, O_RDONLY, 0) != 0)
		return NULL;
	struct stat st;
	char *b = NULL;
	if (fstat(f.fd, &st) == 0 && st.st_size >= 0 && (b = malloc((size_t)st.st_size + 1))) {
		size_t got = 0;
		while (got < (size_t)st.st_size && tkm_fd_ours(&f)) {
			ssize_t r = read(f.fd, b + got, (size_t)st.st_size - got);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				break;
			got += (size_t)r;
		}
		if (got != (size_t)st.st_size) {
			free(b);
			b = NULL;
		} else {
			b[got] = 0;
			*n = got;
		}
	}
	tkm_fd_close(&f);
	return b;
}

static char *path_join(const char *a, const char *b)
{
	size_t n = strlen(a) + strlen(b) + 2;
	char *p = malloc(n);
	if (p)
		snprintf(p, n, "%s/%s", a, b);
	return p;
}

typedef struct pending {
	char **names; /* *.bundle in the outbox, oldest (smallest name) first */
	size_t n;
	uint64_t bytes;
} pending;

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void pending_free(pending *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->names[i]);
	free(p->names);
	p->names = NULL;
	p->n = 0;
}

/* List the outbox. Returns 0, or -1 if it cannot be read. */
static int list_outbox(const char *dir, pending *out)
{
	*out = (pending){0};
	tkm_fd f;
	if (tkm_fd_open(&f, dir, O_RDONLY | O_DIRECTORY, 0) != 0)
		return -1;
	DIR *d = fdopendir(f.fd); /* owns the descriptor now: closedir closes it */
	if (!d) {
		tkm_fd_close(&f);
		return -1;
	}
	size_t cap = 0;
	for (struct dirent *e; (e = readdir(d));) {
		size_t len = strlen(e->d_name);
		if (e->d_name[0] == '.' || len < 8 || strcmp(e->d_name + len - 7, ".bundle") != 0)
			continue;
		if (out->n == cap) {
			size_t nc = cap ? 2 * cap : 16;
			char **v = realloc(out->names, nc * sizeof *v);
			if (!v)
				break;
			out->names = v;
			cap = nc;
		}
		char *name = strdup(e->d_name);
		if (!name)
			break;
		char *full = path_join(dir, name);
		struct stat st;
		tkm_fd s;
		if (full && tkm_fd_open(&s, full, O_RDONLY, 0) == 0) {
			if (fstat(s.fd, &st) == 0)
				out->bytes += (uint64_t)st.st_size;
			tkm_fd_close(&s);
		}
		free(full);
		out->names[out->n++] = name;
	}
	closedir(d);
	if (out->n)
		qsort(out->names, out->n, sizeof *out->names, cmp_name);
	return 0;
}

/* ---- queueing a finished record (a monitor thread, or tk_monitor_stop) ---- */

/* Write one bundle into the outbox: durable before it is visible. Returns 0 or -1. */
static int write_bundle(tkm_outbox *o, const tkm_buf *gz)
{
	int rc = 0;
	/* name: wall-clock microseconds, pid, a counter — sorts oldest first across runs */
	static _Atomic uint32_t seq;
	char name[96], tmpname[100];
	snprintf(name, sizeof name, "%016llx-%d-%u.bundle", (unsigned long long)(tkm_unix_now() * 1e6), (int)getpid(),
	         (unsigned)atomic_fetch_add(&seq, 1));
	snprintf(tmpname, sizeof tmpname, ".%s", name);
	char *tmp = path_join(o->dir, tmpname), *dst = path_join(o->dir, name);
	tkm_fd f = {-1, 0, 0};
	if (tmp && dst && tkm_fd_open(&f, tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644) == 0) {
		rc = tkm_fd_ours(&f) ? write_all(f.fd, gz->p, gz->n) : -1;
		/* durable before it is visible: a crash leaves the whole bundle or none */
		if (rc == 0 && (!tkm_fd_ours(&f) || fsync(f.fd) != 0))
			rc = -1;
		tkm_fd_close(&f);
		if (rc == 0 && rename(tmp, dst) != 0)
			rc = -1;
		if (rc != 0)
			unlink(tmp);
	} else {
		rc = -1;
	}
	int saved = errno; /* the reason the caller reports */
	free(tmp);
	free(dst);
	errno = saved;
	if (rc == 0) {
		pthread_mutex_lock(&o->lock);
		o->kicked = true;
		pthread_cond_broadcast(&o->cond);
		pthread_mutex_unlock(&o->lock);
	}
	return rc;
}

/* Write the held bundles, oldest first, while writing works. Returns how many are still held. */
static size_t flush_held(tkm_outbox *o)
{
	pthread_mutex_lock(&o->hold_lock);
	size_t done = 0;
	while (done < o->nheld && write_bundle(o, &o->held[done]) == 0) {
		o->held_bytes -= o->held[done].n;
		tkm_buf_free(&o->held[done++]);
	}
	if (done) {
		memmove(o->held, o->held + done, (o->nheld - done) * sizeof *o->held);
		o->nheld -= done;
	}
	size_t left = o->nheld;
	pthread_mutex_unlock(&o->hold_lock);
	return left;
}

int tkm_outbox_put(tkm_outbox *o, const char *session_dir, const char *records, size_t n, const char *images_name)
{
	tkm_buf raw = {0}, gz = {0};
	size_t in = 0, mn = 0;
	char *ipath = path_join(session_dir, images_name), *mpath = path_join(session_dir, "meta.json");
	char *images = ipath ? slurp(ipath, &in) : NULL, *meta = mpath ? slurp(mpath, &mn) : NULL;
	free(ipath);
	free(mpath);
	tkm_buf_puts(&raw, "tracekit-bundle 1\n");
	tkm_buf_printf(&raw, "records %zu\n", n);
	tkm_buf_put(&raw, records, n);
	tkm_buf_puts(&raw, "\n");
	if (meta) {
		tkm_buf_printf(&raw, "meta.json %zu\n", mn);
		tkm_buf_put(&raw, meta, mn);
		tkm_buf_puts(&raw, "\n");
	}
	if (images) {
		tkm_buf_printf(&raw, "images.json %zu\n", in);
		tkm_buf_put(&raw, images, in);
		tkm_buf_puts(&raw, "\n");
	}
	free(images);
	free(meta);
	int rc = raw.oom ? -1 : tkm_gzip_stored(raw.p, raw.n, &gz);
	tkm_buf_free(&raw);
	pending p;
	uint64_t queued = 0;
	if (rc == 0 && list_outbox(o->dir, &p) == 0) {
		queued = p.bytes;
		pending_free(&p);
	}
	pthread_mutex_lock(&o->hold_lock);
	queued += o->held_bytes;
	pthread_mutex_unlock(&o->hold_lock);
	if (rc == 0) {
		if (queued + gz.n > o->max_bytes) {
			pthread_mutex_lock(&o->lock);
			o->dropped++;
			pthread_mutex_unlock(&o->lock);
			tkm_buf_free(&gz);
			return 1; /* over the cap: the record stays in the session's records only */
		}
	}
	if (rc != 0) {
		tkm_buf_free(&gz);
		return -1;
	}
	flush_held(o); /* older bundles first */
	pthread_mutex_lock(&o->hold_lock);
	bool behind = o->nheld > 0;
	pthread_mutex_unlock(&o->hold_lock);
	if (!behind && write_bundle(o, &gz) == 0) {
		tkm_buf_free(&gz);
		return 0;
	}
	/* not written: held in memory and retried, never dropped silently (the caller notes it) */
	pthread_mutex_lock(&o->hold_lock);
	tkm_buf *v = realloc(o->held, (o->nheld + 1) * sizeof *v);
	if (v) {
		o->held = v;
		o->held[o->nheld++] = gz;
		o->held_bytes += gz.n;
	} else {
		tkm_buf_free(&gz);
	}
	pthread_mutex_unlock(&o->hold_lock);
	return -1;
}

/* ---- the uploader thread ---- */

static uint64_t next_random(tkm_outbox *o)
{
	/* xorshift64*: jitter only needs to differ between devices, not to be unpredictable */
	o->rng ^= o->rng >> 12;
	o->rng ^= o->rng << 25;
	o->rng ^= o->rng >> 27;
	return o->rng * 2685821657736338717ull;
}

/* Hand every pending bundle to the callback, oldest first (final: the last round at stop, which
 * the stopping flag does not cut short). Returns false if one must be retried. */
static bool send_pending(tkm_outbox *o, bool final)
{
	size_t held = flush_held(o); /* bundles that could not be written yet: again, with back-off */
	pending p;
	if (list_outbox(o->dir, &p) != 0)
		return held == 0; /* the outbox is gone (session removed): nothing to send */
	bool ok = true;
	for (size_t i = 0; i < p.n && ok; i++) {
		pthread_mutex_lock(&o->lock);
		bool stop = o->stopping && !final;
		pthread_mutex_unlock(&o->lock);
		if (stop) {
			ok = false;
			break;
		}
		char *path = path_join(o->dir, p.names[i]);
		size_t n = 0;
		char *body = path ? slurp(path, &n) : NULL;
		if (!body) { /* vanished (acknowledged by another process on this session) */
			free(path);
			continue;
		}
		tk_monitor_upload_result r = o->fn(path, body, n, o->ctx);
		free(body);
		pthread_mutex_lock(&o->lock);
		if (r == TK_MONITOR_UPLOAD_ACKED) {
			unlink(path);
			o->acked++;
		} else if (r == TK_MONITOR_UPLOAD_REJECTED) {
			/* refused for good: kept for a human, never sent again */
			char *rdir = path_join(o->dir, "rejected"), *rpath = rdir ? path_join(rdir, p.names[i]) : NULL;
			if (rdir)
				mkdir(rdir, 0755);
			if (!rpath || rename(path, rpath) != 0)
				unlink(path);
			free(rdir);
			free(rpath);
			o->rejected++;
		} else {
			o->retries++;
			ok = false;
		}
		pthread_mutex_unlock(&o->lock);
		free(path);
	}
	pending_free(&p);
	return ok && held == 0;
}

static void *upload_main(void *arg)
{
	tkm_outbox *o = arg;
	atomic_store(&o->tid, tkm_self_tid());
#if defined(__APPLE__)
	pthread_setname_np("tk-monitor-up");
#else
	pthread_setname_np(pthread_self(), "tk-monitor-up");
#endif
	uint32_t failures = 0;
	uint64_t next_try = 0; /* monotonic ns; 0 = now */
	pthread_mutex_lock(&o->lock);
	o->kicked = true; /* what earlier runs left is sent first */
	while (!o->stopping) {
		uint64_t now = tkm_mono_ns();
		bool due = next_try ? now >= next_try : o->kicked;
		if (!due) {
			/* idle: rescan once a minute anyway (files another run of the app left) */
			tkm_cond_wait_until(&o->cond, &o->lock, next_try ? next_try : now + 60000000000ull);
			if (!next_try && !o->kicked && tkm_mono_ns() >= now + 60000000000ull)
				o->kicked = true;
			continue;
		}
		o->kicked = false;
		pthread_mutex_unlock(&o->lock);
		bool ok = send_pending(o, false);
		pthread_mutex_lock(&o->lock);
		if (ok) {
			failures = 0;
			next_try = 0;
		} else if (!o->stopping) {
			/* exponential back-off with "equal jitter": half the delay fixed, half random, so
			 * devices that lost the server together do not come back together */
			if (failures < 31)
				failures++;
			uint64_t d = (uint64_t)o->retry_ms << (failures - 1 < 20 ? failures - 1 : 20);
			if (d > o->retry_max_ms)
				d = o->retry_max_ms;
			d = d / 2 + next_random(o) % (d / 2 + 1);
			next_try = tkm_mono_ns() + d * 1000000ull;
		}
	}
	/* Stopping. What tk_monitor_stop queued last (the run's final foreground line, records finished
	 * at exit) gets one round now unless this run's last round failed (the server away or slow: no
	 * point waiting for it at exit): each upload is bounded by the callback's own deadline (a server
	 * that refuses connections fails at once). Otherwise, or if it fails, it waits on disk for the
	 * next run. */
	bool last = failures == 0;
	pthread_mutex_unlock(&o->lock);
	if (last)
		send_pending(o, true);
	return NULL;
}

tkm_outbox *tkm_outbox_start(const char *session_dir, const struct tk_monitor_config *c, char *err, size_t errlen)
{
	tkm_outbox *o = calloc(1, sizeof *o);
	if (!o || !(o->dir = path_join(session_dir, "outbox"))) {
		free(o);
		return snprintf(err, errlen, "monitor: out of memory"), NULL;
	}
	if (mkdir(o->dir, 0755) != 0 && errno != EEXIST) {
		snprintf(err, errlen, "monitor: %s: cannot create the outbox: %s", o->dir, strerror(errno));
		free(o->dir);
		free(o);
		return NULL;
	}
	o->fn = c->upload;
	o->ctx = c->upload_ctx;
	o->retry_ms = c->upload_retry_ms ? c->upload_retry_ms : 2000;
	o->retry_max_ms = c->upload_retry_max_ms ? c->upload_retry_max_ms : 300000;
	if (o->retry_max_ms < o->retry_ms)
		o->retry_max_ms = o->retry_ms;
	o->max_bytes = c->upload_max_queued_bytes ? c->upload_max_queued_bytes : 16u << 20;
	o->rng = ((uint64_t)getpid() << 32) ^ tkm_mono_ns() ^ (uint64_t)(tkm_unix_now() * 1e6);
	if (!o->rng)
		o->rng = 1;
	pthread_mutex_init(&o->lock, NULL);
	pthread_mutex_init(&o->hold_lock, NULL);
	tkm_cond_init_mono(&o->cond);
	/* created with every signal blocked, like the monitor's other threads */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = pthread_create(&o->thr, NULL, upload_main, o);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		snprintf(err, errlen, "monitor: pthread_create: %s", strerror(rc));
		pthread_mutex_destroy(&o->lock);
		pthread_mutex_destroy(&o->hold_lock);
		pthread_cond_destroy(&o->cond);
		free(o->dir);
		free(o);
		return NULL;
	}
	o->started = true;
	return o;
}

int64_t tkm_outbox_tid(tkm_outbox *o)
{
	return o ? atomic_load(&o->tid) : 0;
}

uint32_t tkm_outbox_dropped(tkm_outbox *o)
{
	if (!o)
		return 0;
	pthread_mutex_lock(&o->lock);
	uint32_t d = o->dropped;
	pthread_mutex_unlock(&o->lock);
	return d;
}

void tkm_outbox_stop(tkm_outbox *o)
{
	if (!o)
		return;
	pthread_mutex_lock(&o->lock);
	o->stopping = true;
	pthread_cond_broadcast(&o->cond);
	pthread_mutex_unlock(&o->lock);
	if (o->started)
		pthread_join(o->thr, NULL);
	/* a last try: written now, they wait on disk for the next run; still unwritable, they are lost
	 * to the outbox but not to the session's records, where their monitor-event says so */
	flush_held(o);
	for (size_t i = 0; i < o->nheld; i++)
		tkm_buf_free(&o->held[i]);
	free(o->held);
	pthread_mutex_destroy(&o->hold_lock);
	pthread_mutex_destroy(&o->lock);
	pthread_cond_destroy(&o->cond);
	free(o->dir);
	free(o);
}
