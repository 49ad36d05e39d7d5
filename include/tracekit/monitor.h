/*
 * tracekit/monitor.h — libtracekit-monitor, the in-process CPU and hang monitor.
 *
 * Link with build/libtracekit-monitor.a (or .so) and -lpthread -ldl. This header stands alone: it
 * includes nothing from the rest of tracekit and the library does not depend on libtracekit.
 *
 * Two monitors run on their own threads once started:
 *
 *  - CPU trace (MTHawkeye's algorithm and defaults): the whole-process CPU is read every
 *    cpu_interval_ms (1 s); while it is at or above cpu_threshold (80 % = 0.8 of one core) it is
 *    read every cpu_high_interval_ms (0.3 s) and, at each such tick, the stacks of the threads
 *    using more than thread_threshold (15 %) of the process total are captured and merged into a
 *    proportion tree. Once the high load has lasted cpu_duration_ms (60 s) a record is emitted
 *    and re-emitted every persist_interval_ms (5 s) while it lasts ("live"), then a last time when
 *    the load ends or the monitor stops.
 *
 *  - Hang detector: a watchdog checks that one watched thread (an event loop) keeps responding,
 *    either because the loop calls tk_monitor_heartbeat() on every iteration (and
 *    tk_monitor_idle() before it waits for events), or because the host supplies hang_post, a
 *    function that runs a callback on the loop (the watchdog posts pings through it). When the
 *    loop has not responded for hang_threshold_ms (2 s) the stacks of all threads are captured,
 *    then the blocked thread is sampled every hang_sample_interval_ms (50 ms) until it responds;
 *    one report per hang with its duration. A hang whose stack equals the previous hang's is
 *    reported with Fibonacci back-off (1st, 2nd, 3rd, 5th, 8th … repetition); at most
 *    hang_daily_limit reports per UTC day.
 *
 * Sinks: a Records file in a session directory (docs/records-format.md; `tracekit records` reads
 * it) and/or a callback. All functions are thread-safe. Nothing here prints or exits; errors come
 * back as a return value with a one-line message.
 *
 * LD_PRELOAD: build/libtracekit-monitor.so starts the CPU trace in any program when TK_MONITOR_DIR
 * is set (see the environment variables below and docs/monitor.md); `tracekit monitor -- CMD`
 * sets them for you.
 *
 *   TK_MONITOR_DIR                    session directory (created if missing); required
 *   TK_MONITOR_CPU_INTERVAL_MS        cpu_interval_ms            (default 1000)
 *   TK_MONITOR_CPU_HIGH_INTERVAL_MS   cpu_high_interval_ms       (default 300)
 *   TK_MONITOR_CPU_THRESHOLD          cpu_threshold, percent of one core (default 80)
 *   TK_MONITOR_THREAD_THRESHOLD       thread_threshold, percent of the process total (default 15)
 *   TK_MONITOR_CPU_DURATION_MS        cpu_duration_ms            (default 60000)
 *   TK_MONITOR_PERSIST_INTERVAL_MS    persist_interval_ms        (default 5000)
 *   TK_MONITOR_MAX_NODES              max_nodes                  (default 4096)
 *   TK_MONITOR_MAX_FRAMES             max_frames                 (default 64, at most 128)
 *   TK_MONITOR_SIGNAL                 signal number for stack capture (default: first free SIGRTMIN+4…)
 *   TK_MONITOR_CAPTURE_TIMEOUT_MS     capture_timeout_ms         (default 50)
 *   TK_MONITOR_THREAD_CPU             "clock" (default) or "schedstat": how per-thread CPU is read
 *   TK_MONITOR_PERF                   "0": CPU-trace stacks by signal only (default 1: from perf_event
 *                                     samples where the kernel permits it, see docs/monitor.md)
 *   TK_MONITOR_UPLOAD_URL             Linux: send finished records to this `tracekit serve --ingest`
 *                                     (tk_monitor_http_upload; DIR/outbox until acknowledged)
 *   TK_MONITOR_UPLOAD_TOKEN_FILE      its bearer token (first line); required with the URL
 *   TK_MONITOR_UPLOAD_TIMEOUT_MS      the deadline of each upload (default 30000)
 */
#ifndef TRACEKIT_MONITOR_H
#define TRACEKIT_MONITOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* TK_MONITOR_API marks the library's public functions. The library is compiled with
 * -fvisibility=hidden, so the shared object exports these and nothing else (its internal tkm_*
 * functions stay private and cannot clash with the host's symbols); define TK_MONITOR_API before
 * including this header to override it (e.g. empty, for a static build into a host's own .so). */
#ifndef TK_MONITOR_API
#if defined(__GNUC__) || defined(__clang__)
#define TK_MONITOR_API __attribute__((visibility("default")))
#else
#define TK_MONITOR_API
#endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tk_monitor tk_monitor;

typedef enum tk_monitor_event_kind {
	TK_MONITOR_CPU_HIGHLOAD = 1,
	TK_MONITOR_HANG = 2,
} tk_monitor_event_kind;

/* What the callback receives. Strings and numbers are valid during the call only. */
typedef struct tk_monitor_event {
	tk_monitor_event_kind kind;
	int live;            /* 1: the load/hang still lasts and a later event will update it; 0: final */
	double start_unix;   /* start, Unix seconds */
	double duration_s;   /* so far (live) or total */
	double average_cpu;  /* CPU: average of the whole process over the high load, percent of one core */
	int64_t tid;         /* hang: the blocked thread (kernel tid on Linux) */
	uint32_t samples;    /* stacks merged into the tree */
	uint32_t unsampled;  /* stacks that could not be taken (e.g. the thread blocks all signals) */
	int truncated;       /* the tree hit max_nodes (see docs/records-format.md) */
	uint32_t suppressed; /* hang: identical hangs not reported since the previous report */
	const char *key;     /* the Records key */
	const char *record;  /* the `cpu-highload` / `hang` value (JSON) */
	const char *tree;    /* the `…-stackframe` value: the proportion tree (JSON) */
} tk_monitor_event;

/* Called on a monitor thread (or in tk_monitor_stop/flush on the caller's), without the monitor's
 * lock. It must not call tk_monitor_stop on the same monitor (that joins the calling thread) nor
 * tk_monitor_flush (which would call it again). */
typedef void (*tk_monitor_callback)(const tk_monitor_event *ev, void *ctx);

/* ---- uploading finished records (optional) ----
 *
 * With cfg.dir and cfg.upload set, every finished record (a hang when it ends; a CPU high-load
 * period when the load drops or the monitor stops) is also written, durably (write, fsync, rename),
 * as one upload bundle in DIR/outbox/ — gzip'd, the format `tracekit serve --ingest` takes
 * (docs/store.md), the same reports `tracekit ingest DIR` would store — and the monitor's own
 * uploader thread hands each file to cfg.upload, oldest first:
 *
 *   TK_MONITOR_UPLOAD_ACKED     the server committed it (HTTP 2xx): the file is deleted.
 *   TK_MONITOR_UPLOAD_RETRY     not now (no network, timeout, 5xx, 408, 429): the file stays; the
 *                               next attempt comes after a back-off that starts at upload_retry_ms and
 *                               doubles per failure up to upload_retry_max_ms, with jitter (half the
 *                               delay fixed, half random), then the whole outbox is tried again.
 *   TK_MONITOR_UPLOAD_REJECTED  refused for good (another 4xx): moved to DIR/outbox/rejected/, kept
 *                               for a human, never sent again.
 *
 * The callback runs on the uploader thread only (never on the app's threads, never on the monitor's
 * sampling threads), one file at a time, and may block (its own timeouts bound tk_monitor_stop,
 * which waits for a call in progress). Resending is harmless: the server stores a report once.
 * Files stay on disk until acknowledged: records finished at tk_monitor_stop, or while the server
 * is away, are sent by the next tk_monitor_start on the same dir (or by `tracekit upload DIR`, which
 * sends the whole session). Past upload_max_queued_bytes in the outbox, a new finished record is
 * not queued (it stays in DIR/records; a `monitor-event` line says how many were left out).
 *
 * On iOS the app owns networking: give a callback that sends the body with URLSession (TLS, the
 * app's certificate policy and background session rules) and answers from the HTTP status. On
 * Linux, tk_monitor_http_upload below is ready-made: plain HTTP/1.1 over a socket. */
typedef enum tk_monitor_upload_result {
	TK_MONITOR_UPLOAD_ACKED = 0,
	TK_MONITOR_UPLOAD_RETRY = 1,
	TK_MONITOR_UPLOAD_REJECTED = 2,
} tk_monitor_upload_result;

/* path: the bundle's file (for logs); body, n: its bytes (POST them as they are, they are gzip'd). */
typedef tk_monitor_upload_result (*tk_monitor_upload_fn)(const char *path, const void *body, size_t n, void *ctx);

/* Runs fn(arg) on the watched event loop, later (asynchronously). Must not block. */
typedef void (*tk_monitor_post_fn)(void (*fn)(void *arg), void *arg, void *host_ctx);

typedef struct tk_monitor_config {
	/* sinks (either or both) */
	const char *dir;              /* session directory for `records` and `images.json`; NULL = none */
	tk_monitor_callback callback; /* called on a monitor thread; NULL = none */
	void *callback_ctx;

	/* CPU trace */
	int cpu_enabled;               /* default 1 */
	uint32_t cpu_interval_ms;      /* 1000 */
	uint32_t cpu_high_interval_ms; /* 300 */
	double cpu_threshold;          /* 80: percent of one core, the process may exceed 100 */
	double thread_threshold;       /* 15: percent of the process's total CPU */
	uint32_t cpu_duration_ms;      /* 60000: high load must last this long to make a record */
	uint32_t persist_interval_ms;  /* 5000: rewrite a living record this often */

	/* hang detector */
	int hang_enabled;                 /* default 0 */
	uint32_t hang_threshold_ms;       /* 2000 (250 for micro-hangs) */
	uint32_t hang_sample_interval_ms; /* 50 */
	uint32_t hang_ping_interval_ms;   /* ping mode: pause between answered pings; 0 = threshold/20 */
	uint32_t hang_daily_limit;        /* 100 reports per UTC day */
	tk_monitor_post_fn hang_post;     /* NULL: heartbeat mode */
	void *hang_post_ctx;

	/* trees and stacks */
	uint32_t max_nodes;          /* 4096 nodes per tree */
	uint32_t max_frames;         /* 64 frames per stack (at most 128) */
	int signal;                  /* Linux: capture signal; 0 = first free real-time signal from SIGRTMIN+4 */
	uint32_t capture_timeout_ms; /* 50: give up on a thread that does not run the capture */
	uint32_t compact_bytes;      /* 1 MiB: after this much (or the file's size) is appended, rewrite `records`
	                              * keeping the last line of each record (living records are rewritten by
	                              * appending); 0 = never */
	int use_schedstat; /* Linux: 0 = per-thread CPU clocks (default), 1 = /proc/…/schedstat descriptors */
	int no_perf;       /* Linux: 1 = CPU-trace stacks always by signal, never from perf_event samples
	                    * (default 0: perf_event where the kernel permits it; TK_MONITOR_PERF=0) */

	/* uploader (see above; needs dir) */
	tk_monitor_upload_fn upload; /* NULL = no outbox */
	void *upload_ctx;
	uint32_t upload_retry_ms;         /* 2000: first back-off */
	uint32_t upload_retry_max_ms;     /* 300000: longest back-off */
	uint64_t upload_max_queued_bytes; /* 16 MiB of bundles in the outbox at most */
} tk_monitor_config;

/* Fill cfg with the defaults above. */
TK_MONITOR_API void tk_monitor_config_default(tk_monitor_config *cfg);

/* Override fields of cfg from the TK_MONITOR_* environment variables listed above. Returns 0, or -1
 * with a message naming the variable and its bad value in err (cfg is then partly updated). */
TK_MONITOR_API int tk_monitor_config_from_env(tk_monitor_config *cfg, char *err, size_t errlen);

/* Start the monitors. Creates cfg->dir if needed, writes images.json and the Records header.
 * Returns the monitor, or NULL with a one-line message in err. The config is copied. */
TK_MONITOR_API tk_monitor *tk_monitor_start(const tk_monitor_config *cfg, char *err, size_t errlen);

/* Stop the threads, persist living records (marked final), release everything. NULL is a no-op. */
TK_MONITOR_API void tk_monitor_stop(tk_monitor *m);

/* Persist living records now (e.g. before the app is suspended). */
TK_MONITOR_API void tk_monitor_flush(tk_monitor *m);
/* Foreground time, for Apple's hang rate (seconds of hangs per hour of foreground use; `tracekit
 * stats --db URL --metric hang.rate`). Every monitor counts the time its process spends in the
 * foreground and writes it to the session as the run's `foreground` line (docs/records-format.md):
 * live at each tk_monitor_flush, final at tk_monitor_stop, so the store divides the session's hangs
 * by it when the session directory is ingested or uploaded (`tracekit ingest`, `tracekit upload`;
 * the outbox of TK_MONITOR_UPLOAD_URL carries finished records only). Until told otherwise the whole lifetime of the
 * process counts as foreground (right for Linux services and command-line programs). An iOS app says when it leaves and
 * returns, from its UIApplication notifications (or the scene equivalents): UIApplicationDidBecomeActiveNotification →
 * tk_monitor_set_foreground(true) UIApplicationWillResignActiveNotification  → tk_monitor_set_foreground(false)
 *   UIApplicationDidEnterBackgroundNotification → tk_monitor_set_foreground(false)
 * (an app launched into the background calls tk_monitor_set_foreground(false) before starting the
 * monitor). Applies to every running monitor of the process and to monitors started later.
 * Thread-safe; cheap (a lock and a clock read). */
TK_MONITOR_API void tk_monitor_set_foreground(bool foreground);

/* Heartbeat mode: call from the watched loop at each iteration (the calling thread becomes the
 * watched thread), and tk_monitor_idle() right before the loop waits for events so that waiting is
 * not a hang. Both cost one clock read and two atomic stores. */
TK_MONITOR_API void tk_monitor_heartbeat(tk_monitor *m);
TK_MONITOR_API void tk_monitor_idle(tk_monitor *m);

/* Ping mode: call once from the watched loop's thread so its stack can be captured even if the very
 * first ping is never answered (otherwise the thread is learnt from the first answered ping). */
TK_MONITOR_API void tk_monitor_watch_this_thread(tk_monitor *m);

/* The process-wide monitor started by the LD_PRELOAD constructor, or NULL. */
TK_MONITOR_API tk_monitor *tk_monitor_preloaded(void);

#if defined(__linux__)
/* The ready-made uploader for Linux builds: POSTs each bundle to URL ("http://HOST:PORT/PATH", e.g.
 * http://127.0.0.1:8470/v1/reports of `tracekit serve --ingest`) with "Authorization: Bearer
 * TOKEN", plain HTTP/1.1 over a socket (no TLS: put a TLS-terminating proxy in front of serve, or
 * give your own callback), 5 s to connect, and one deadline for the whole upload, 30 s by default
 * (TK_MONITOR_UPLOAD_TIMEOUT_MS or tk_monitor_http_set_timeout): a server that trickles its answer
 * cannot hold the uploader, nor the app's exit waiting for it, any longer. 2xx → ACKED; 408, 429,
 * 5xx, no connection, no answer by the deadline → RETRY; other 4xx → REJECTED.
 *
 *   tk_monitor_http *h = tk_monitor_http_new("http://127.0.0.1:8470/v1/reports", token, err, sizeof err);
 *   cfg.upload = tk_monitor_http_upload; cfg.upload_ctx = h;
 *   … tk_monitor_stop(m); tk_monitor_http_free(h);
 *
 * Returns NULL with a one-line message in err for a URL it cannot use (https, no port …). */
typedef struct tk_monitor_http tk_monitor_http;
TK_MONITOR_API tk_monitor_http *tk_monitor_http_new(const char *url, const char *token, char *err, size_t errlen);
TK_MONITOR_API void tk_monitor_http_free(tk_monitor_http *h);
TK_MONITOR_API tk_monitor_upload_result tk_monitor_http_upload(const char *path, const void *body, size_t n, void *ctx);
/* The deadline of each upload in milliseconds (0: the default, 30000). */
TK_MONITOR_API void tk_monitor_http_set_timeout(tk_monitor_http *h, unsigned ms);
/* What the last call got: the HTTP status (0 = no answer) and a one-line reason. */
TK_MONITOR_API int tk_monitor_http_last(const tk_monitor_http *h, char *reason, size_t n);
#endif

#ifdef __cplusplus
}
#endif
#endif
