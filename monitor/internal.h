/*
 * monitor/internal.h — pieces of the monitor core shared between its files and its unit tests.
 * No dependency on lib/ or the other tracekit headers.
 */
#ifndef TK_MONITOR_INTERNAL_H
#define TK_MONITOR_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h> /* ssize_t */

/* A growable string; after an allocation failure `oom` is set and further appends are dropped. */
typedef struct tkm_buf {
	char *p;
	size_t n, cap;
	bool oom;
} tkm_buf;

void tkm_buf_put(tkm_buf *b, const char *s, size_t n);
void tkm_buf_puts(tkm_buf *b, const char *s);
void tkm_buf_printf(tkm_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tkm_buf_json_str(tkm_buf *b, const char *s); /* a quoted, escaped JSON string */
void tkm_buf_free(tkm_buf *b);

/*
 * The proportion tree (docs/records-format.md): nodes merged by raw address, built from the
 * outermost frame to the leaf, each sample adding 1 along its path. At most max_nodes nodes: a
 * sample that would need a node past the bound stops at the deepest node it reached (its count
 * stays exact there) and the tree is marked truncated. Children keep insertion order.
 */
typedef struct tkm_node {
	uintptr_t frame;
	uint32_t count;
	int32_t child, next; /* first child, next sibling; -1 = none */
} tkm_node;

typedef struct tkm_tree {
	tkm_node *v;
	uint32_t n, cap, max_nodes;
	int32_t first_root;
	uint32_t samples; /* samples offered, including those that could not enter the tree */
	bool truncated;
} tkm_tree;

void tkm_tree_init(tkm_tree *t, uint32_t max_nodes);
void tkm_tree_reset(tkm_tree *t);
void tkm_tree_free(tkm_tree *t);
/* frames are leaf first (frames[0] = PC); inserted from frames[n-1] down to frames[0]. */
void tkm_tree_add(tkm_tree *t, const uintptr_t *frames, int n);
/* Append the tree as MTHawkeye's JSON array to b. */
void tkm_tree_json(const tkm_tree *t, tkm_buf *b);

/* Keep the last line of each (collection, key) of a Records text, in file order (empty lines
 * dropped); appends to out. Returns 0 or -1 (out of memory). */
int tkm_records_compact(const char *text, size_t n, tkm_buf *out);

/* Apple's CFAbsoluteTime epoch (2001-01-01 UTC) in Unix seconds. */
#define TKM_CF_EPOCH 978307200.0

/* Fibonacci back-off: is the n-th consecutive identical hang (n >= 1) reported? 1,2,3,5,8,13 … */
bool tkm_backoff_reports(uint32_t n);

/* A descriptor the monitor keeps open in its host (fd.c): moved high, checked before every use. */
typedef struct tkm_fd {
	int fd; /* -1 = none */
	uint64_t dev, ino;
} tkm_fd;

/* Take ownership of fd (just opened): move it above half the descriptor limit, remember its file.
 * Returns 0, or -1 (fd < 0 or not fstat-able; closed). */
int tkm_fd_adopt(tkm_fd *f, int fd);
/* open(path, flags | O_CLOEXEC, mode) and adopt. Returns 0 or -1 (errno from open). */
int tkm_fd_open(tkm_fd *f, const char *path, int flags, unsigned mode);
/* Is f still open on the file it was opened on? If the program closed or replaced it, forget it
 * (f->fd = -1, never closed by us), count it, and return false. */
bool tkm_fd_ours(tkm_fd *f);
/* Close f if it is still ours; f->fd = -1 either way. */
void tkm_fd_close(tkm_fd *f);
/* Descriptors found closed or replaced by the program since the process started. */
unsigned tkm_fd_lost_count(void);
/* Read up to n-1 bytes of a small file through a checked descriptor, NUL-terminated; -1 on error. */
ssize_t tkm_fd_read_small(const char *path, char *buf, size_t n);

/* The outbox (upload.c): finished records as upload bundles in DIR/outbox/ until the host's upload
 * callback acknowledges them, sent from a thread of its own with back-off and jitter. */
struct tk_monitor_config;
typedef struct tkm_outbox tkm_outbox;
tkm_outbox *tkm_outbox_start(const char *session_dir, const struct tk_monitor_config *c, char *err, size_t errlen);
/* Queue one finished record: records is a whole Records text (header, launch-time, the record's two
 * lines); meta.json and the run's images file (images_name) are read from session_dir. Returns 0,
 * 1 when the outbox is over its byte cap (nothing queued), -1 on an I/O error. */
int tkm_outbox_put(tkm_outbox *o, const char *session_dir, const char *records, size_t n, const char *images_name);
void tkm_outbox_stop(tkm_outbox *o); /* joins the thread; the files stay */
int64_t tkm_outbox_tid(tkm_outbox *o);
uint32_t tkm_outbox_dropped(tkm_outbox *o);
/* data as one gzip member of stored deflate blocks (what the bundle format asks: gzip, any level). */
int tkm_gzip_stored(const void *data, size_t n, tkm_buf *out);

/* A timed wait (holding l) until tkm_mono_ns() reaches until; on Linux c must use CLOCK_MONOTONIC. */
void tkm_cond_wait_until(pthread_cond_t *c, pthread_mutex_t *l, uint64_t until);
/* Initialize c for tkm_cond_wait_until (on Linux: CLOCK_MONOTONIC). */
void tkm_cond_init_mono(pthread_cond_t *c);

#endif
