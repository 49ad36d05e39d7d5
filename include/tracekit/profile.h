/*
 * tracekit/profile.h — the profile model every reader fills and every writer reads.
 *
 * A profile is a set of threads, each with weighted samples over stacks. Memory grows with the
 * number of *distinct* stacks, not with the number of samples:
 *
 *   strings  interned once, referred to by a tk_str (0 is the empty string)
 *   binaries (name, path, UUID, arch, load address), deduplicated by content
 *   frames   (address, name, binary, file:line, flags), deduplicated by content
 *   stacks   a prefix tree: stack = (parent stack, frame), root first; 0 is the empty stack
 *   threads  (pid, tid, names) with a map stack → (weight, sample count) and time bounds
 *
 * Weights are summed, never counted: a time-profile row of 1.13 ms adds 1130000 ns. The unit is
 * kept as recorded (ns, cycles, events, samples). Readers may filter by time at ingest (see
 * tk_read_options) so per-sample times never need to be kept.
 *
 * Two opt-in extras sit beside the aggregates:
 *   sample list  tk_profile_keep_samples(p, 1) before reading: every tk_sample_add also records
 *                (time, weight, thread, stack) in arrival order, for writers that must reproduce the
 *                rows of the input (`tracekit symbolicate`) or their time order (the Firefox
 *                Profiler's Stack Chart). Off by default: memory then stays bounded by distinct
 *                stacks. When on it is the one part that grows with the rows, kept delta-coded per
 *                thread: about 6-9 bytes per row for an Instruments export (time 1 ms after the
 *                thread's previous one, the same weight). Transforms and tk_symbolicate_profile
 *                carry it over.
 *   image list   images the trace says were loaded (UUID, path, load address), e.g. from the kdebug
 *                tables of a pre-Xcode 14.3 export, for frames that carry only an address.
 */
#ifndef TRACEKIT_PROFILE_H
#define TRACEKIT_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "tracekit/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef uint32_t tk_str;       /* interned string; 0 = "" */
typedef uint32_t tk_binary_id; /* 0 = no binary */
typedef uint32_t tk_frame_id;  /* 0 is never a valid frame */
typedef uint32_t tk_stack_id;  /* 0 = the empty stack */

typedef enum tk_unit {
	TK_UNIT_NS = 0,  /* time-profile, time-sample: nanoseconds */
	TK_UNIT_CYCLES,  /* cpu-profile: CPU cycles */
	TK_UNIT_EVENTS,  /* counters-profile: PMC events */
	TK_UNIT_SAMPLES, /* a count of samples (records, folded input) */
	TK_UNIT_BYTES,   /* bytes allocated (Instruments Allocations Deep Copy); samples count allocations */
} tk_unit;

const char *tk_unit_name(tk_unit u); /* "ns", "cycles", "events", "samples", "bytes" */

typedef struct tk_binary {
	tk_str name;        /* "libsystem_kernel.dylib" */
	tk_str path;        /* full path on the recording device */
	tk_str uuid;        /* upper-case with dashes, as xctrace writes it; 0 if unknown */
	tk_str arch;        /* "arm64", "arm64e", "x86_64" … */
	uint64_t load_addr; /* runtime load address (__TEXT base after slide) */
} tk_binary;

enum {
	TK_FRAME_INLINED = 1u << 0,   /* an inlined call inside its caller's code */
	TK_FRAME_SYNTHETIC = 1u << 1, /* not code: a thread or process node, "<no backtrace>" … */
	TK_FRAME_LEAF_PC = 1u << 2,   /* addr is the sampled PC (+1 for xctrace 14.3+), not a return address */
	TK_FRAME_SWIFT = 1u << 3,     /* the name is a Swift symbol */
	TK_FRAME_EMPTY = 1u << 4,     /* the name is known to be empty (folded `a;;b`), not missing */
};

typedef struct tk_frame {
	uint64_t addr;       /* as recorded; 0 if unknown */
	tk_str name;         /* symbol; 0 if unsymbolicated (writers then print 0x<addr>) */
	tk_binary_id binary; /* 0 if none */
	tk_str file;         /* source path; 0 if unknown */
	uint32_t line;       /* 0 if unknown */
	uint32_t flags;      /* TK_FRAME_* */
} tk_frame;

typedef struct tk_stack_node {
	tk_stack_id parent; /* 0 for a root-level frame */
	tk_frame_id frame;
	uint32_t depth; /* 1 for a root-level frame */
} tk_stack_node;

/* One (stack, weight) cell of a thread. */
typedef struct tk_stack_weight {
	tk_stack_id stack;
	uint64_t weight;
	uint64_t samples;
} tk_stack_weight;

typedef uint32_t tk_event_id; /* 1-based index into the profile's events; 0 = no event */

/* How a thread's samples relate to its event (tk_thread_set_event). */
typedef enum tk_thread_role {
	TK_ROLE_NONE = 0,   /* not part of an event */
	TK_ROLE_OWNED,      /* its samples are stacks of the event: counted in the event's weight */
	TK_ROLE_ATTRIBUTED, /* owned, and the thread the event is about (the blocked, crashed or
	                       attributed thread); at most one per event by convention */
	TK_ROLE_CONTEXT,    /* a snapshot taken at the event (every thread when a hang was detected):
	                       shown with it, never counted in its weight */
} tk_thread_role;

typedef struct tk_thread {
	int64_t pid; /* -1 if unknown */
	uint64_t tid;
	tk_str name;     /* "Main Thread", "com.apple.main-thread" … ; 0 if unnamed */
	tk_str process;  /* process name; 0 if unknown */
	uint64_t weight; /* Σ weights of its samples, sentinel (empty) stacks included */
	uint64_t samples;
	uint64_t t_min, t_max; /* sample time bounds in ns since run start; t_min > t_max if none */
	tk_event_id event;     /* the event whose stacks these samples are; 0 if none */
	tk_thread_role role;   /* how (TK_ROLE_NONE when event is 0) */
} tk_thread;

typedef struct tk_profile tk_profile;

tk_profile *tk_profile_new(void);
void tk_profile_free(tk_profile *p);

/* ---- strings ---- */
tk_str tk_intern(tk_profile *p, const char *s, size_t len);
tk_str tk_intern_cstr(tk_profile *p, const char *s);
const char *tk_string(const tk_profile *p, tk_str s); /* never NULL */
size_t tk_string_len(const tk_profile *p, tk_str s);

/* ---- binaries and frames (deduplicated by content) ---- */
tk_binary_id tk_binary_add(tk_profile *p, const tk_binary *b);
const tk_binary *tk_binary_get(const tk_profile *p, tk_binary_id id); /* NULL for 0 */
size_t tk_binary_count(const tk_profile *p);

tk_frame_id tk_frame_add(tk_profile *p, const tk_frame *f);
const tk_frame *tk_frame_get(const tk_profile *p, tk_frame_id id);
size_t tk_frame_count(const tk_profile *p);
/* The frame's display name: its symbol, or "0x" + lowercase hex of addr when it has none ("" for a
 * TK_FRAME_EMPTY frame). The buffer is used only for the hex form. */
const char *tk_frame_label(const tk_profile *p, tk_frame_id id, char buf[32]);

/* ---- stacks (prefix tree, root first) ---- */
tk_stack_id tk_stack_push(tk_profile *p, tk_stack_id parent, tk_frame_id frame);
/* Build a stack from frames listed leaf first (as xctrace records them). */
tk_stack_id tk_stack_from_leaf_first(tk_profile *p, const tk_frame_id *frames, size_t n);
const tk_stack_node *tk_stack_get(const tk_profile *p, tk_stack_id id); /* NULL for 0 */
size_t tk_stack_count(const tk_profile *p);                             /* excluding 0 */
uint32_t tk_stack_depth(const tk_profile *p, tk_stack_id id);
/* Write the frames of a stack root first into out (capacity cap); returns the depth. */
size_t tk_stack_frames(const tk_profile *p, tk_stack_id id, tk_frame_id *out, size_t cap);

/* ---- threads and samples ---- */
typedef uint32_t tk_thread_id; /* index into the thread table */
/* Find or create the thread (pid, tid); name and process are set when given (non-zero). */
tk_thread_id tk_thread_get_or_add(tk_profile *p, int64_t pid, uint64_t tid, tk_str name, tk_str process);
/* A thread of its own, even when (pid, tid) exists, and never found by tk_thread_get_or_add: the
 * same thread seen by several events (a snapshot at each hang) is one thread per event. */
tk_thread_id tk_thread_add(tk_profile *p, int64_t pid, uint64_t tid, tk_str name, tk_str process);
const tk_thread *tk_thread_get(const tk_profile *p, tk_thread_id t);
size_t tk_thread_count(const tk_profile *p);
void tk_thread_set_name(tk_profile *p, tk_thread_id t, tk_str name);
/* Add one sample: weight in the profile's unit, time in ns since run start (UINT64_MAX if unknown). */
void tk_sample_add(tk_profile *p, tk_thread_id t, tk_stack_id stack, uint64_t weight, uint64_t time);
/* Add n already-aggregated samples. */
void tk_sample_add_n(tk_profile *p, tk_thread_id t, tk_stack_id stack, uint64_t weight, uint64_t n);
/* Widen the thread's time bounds to include time (ns since run start) without adding a sample;
 * transforms use it to carry bounds over to the profiles they make. UINT64_MAX is ignored. */
void tk_thread_note_time(tk_profile *p, tk_thread_id t, uint64_t time);
/* The thread's distinct stacks with their summed weights, in first-seen order. */
const tk_stack_weight *tk_thread_stacks(const tk_profile *p, tk_thread_id t, size_t *n);

/* ---- per-sample list (opt-in) ---- */
typedef struct tk_sample {
	uint64_t time;       /* ns since run start; UINT64_MAX if unknown */
	uint64_t weight;     /* in the profile's unit */
	tk_thread_id thread; /* this profile's thread */
	tk_stack_id stack;   /* this profile's stack (0 = empty) */
} tk_sample;

/* Turn the per-sample list on (before reading) or off (which frees it). */
void tk_profile_keep_samples(tk_profile *p, int on);
int tk_profile_keeps_samples(const tk_profile *p);
/* The samples in arrival order (NULL and *n = 0 when the list is off). Samples added with
 * tk_sample_add_n are aggregated only and never appear here. This unpacks the list into an array
 * of 24 bytes per row held by the profile (until the list changes): writers that can walk the
 * rows once should use tk_sample_iter instead. */
const tk_sample *tk_profile_sample_list(const tk_profile *p, size_t *n);
/* Append a record to the list only (no aggregate change): for transforms that rebuild the
 * aggregates from cells and the list from the input's list. Ignored when the list is off or the
 * thread does not exist (yet). */
void tk_sample_list_append(tk_profile *p, const tk_sample *s);
size_t tk_profile_sample_count(const tk_profile *p); /* rows in the list */
/* Non-zero unless a listed sample has an unknown time (UINT64_MAX). */
int tk_profile_sample_times_known(const tk_profile *p);
size_t tk_thread_sample_count(const tk_profile *p, tk_thread_id t); /* the thread's rows in the list */
/* Non-zero when the thread's listed samples arrived in time order (non-decreasing, all known),
 * as they do in xctrace exports: a time-ordered writer then needs no sort. */
int tk_thread_samples_in_order(const tk_profile *p, tk_thread_id t);

/* Walk the list without unpacking it: one thread's samples in arrival order, or with
 * TK_ALL_THREADS every sample in arrival order. The profile must not change meanwhile. */
#define TK_ALL_THREADS UINT32_MAX
typedef struct tk_sample_iter tk_sample_iter;
tk_sample_iter *tk_sample_iter_new(const tk_profile *p, tk_thread_id t);
int tk_sample_iter_next(tk_sample_iter *it, tk_sample *s); /* 0 at the end */
void tk_sample_iter_free(tk_sample_iter *it);

/* ---- loaded images (for address-only stacks) ---- */
/* Record an image the trace says was loaded (uuid, path, name, arch, load_addr as in tk_binary;
 * strings of this profile). Identical records are kept once. Returns the image's index. */
size_t tk_profile_image_add(tk_profile *p, const tk_binary *b);
const tk_binary *tk_profile_images(const tk_profile *p, size_t *n);

/* ---- events: what happened, with the stacks it owns ----
 *
 * An event is an interval or an instant the input reports as a unit: a period of high CPU load or a
 * hang from an in-process monitor, a MetricKit diagnostic, a crash, spindump or `sample` report, a
 * signpost. Events live in the profile beside the samples, so every consumer (writers, the store,
 * stats) reads them from the profile and never from the input.
 *
 * An event owns stacks through threads: tk_thread_set_event(p, t, e, role) gives thread t's samples
 * to e. A record of a monitor is one synthetic thread owned by its event; a crash report is an event
 * whose threads each hold one sample; a MetricKit diagnostic owns one thread per call stack (or one
 * aggregated pseudo-thread). Invariants the model keeps:
 *   - e.weight and e.samples are Σ over the threads e owns (roles OWNED and ATTRIBUTED), kept up to
 *     date as samples are added; CONTEXT threads are shown with e but never counted;
 *   - times are in the profile's clock (ns since run start, as sample times are); an input that only
 *     knows wall-clock time says so in `wall` (Unix seconds) and leaves start UINT64_MAX;
 *   - events are kept in the order added (readers add them in start order when they can).
 *
 * Attributes are key/value facts, each a string or a number, set again to replace. Names readers
 * and consumers share (others are free; keys are lower-case words joined by '.'):
 *   app, app.version, app.build, bundle, device, os, arch, session, process, pid, incident
 *   where            "file:line" of the input that holds it
 *   cpu.average      average CPU of the period, percent of one core (may exceed 100)
 *   cpu.time         CPU time consumed, seconds;    sampled.time   time covered by the stacks, s
 *   disk.writes      bytes written;                 exception.type / exception.code / signal
 *   termination.reason, launch.duration (s), hang.duration (s, when it differs from the interval)
 */
typedef enum tk_event_kind {
	TK_EVENT_MARKER = 0,    /* a named instant or interval with no meaning of its own (signposts) */
	TK_EVENT_CPU_HIGHLOAD,  /* sustained CPU load (monitor cpu-highload records) */
	TK_EVENT_HANG,          /* the main thread blocked (monitor hang, MTHawkeye ANR, MetricKit, spindump) */
	TK_EVENT_CRASH,         /* a crash report or crash diagnostic */
	TK_EVENT_CPU_EXCEPTION, /* CPU resource limit hit (MetricKit cpuException, .ips cpu_resource) */
	TK_EVENT_DISK_WRITE,    /* disk-write limit hit (MetricKit diskWriteException) */
	TK_EVENT_LAUNCH,        /* a slow launch (MetricKit appLaunch) */
	TK_EVENT_KIND_COUNT
} tk_event_kind;

/* "marker", "cpu-highload", "hang", "crash", "cpu-exception", "disk-write", "launch". */
const char *tk_event_kind_name(tk_event_kind k);
/* The kind named (those names, or the short forms "cpu", "disk"); -1 if none. */
int tk_event_kind_parse(const char *name, tk_event_kind *out);

enum {
	TK_EVENT_LIVE = 1u << 0,      /* the writer marked it as still going on when it wrote it */
	TK_EVENT_TRUNCATED = 1u << 1, /* its stacks were cut by the writer's bound (weights still exact) */
};

typedef struct tk_event {
	tk_event_kind kind;
	tk_str name;         /* what the input calls it ("cpu-highload", "anr", "hangDiagnostics") */
	tk_str key;          /* the input's identifier (Records key, incident id …); 0 if none */
	uint64_t start;      /* ns since run start; UINT64_MAX if unknown */
	uint64_t duration;   /* ns; 0 for an instant; UINT64_MAX if unknown */
	double wall;         /* wall-clock start, Unix seconds; NAN if unknown */
	uint32_t flags;      /* TK_EVENT_* */
	tk_thread_id thread; /* the thread it is drawn on; TK_NO_THREAD for the whole process */
	uint64_t weight;     /* Σ weights of the samples it owns (kept by the model) */
	uint64_t samples;    /* Σ their sample counts (kept by the model) */
} tk_event;

#define TK_NO_THREAD UINT32_MAX

/* Add an event (weight and samples are ignored: the model keeps them). Returns its id. */
tk_event_id tk_event_add(tk_profile *p, const tk_event *e);
const tk_event *tk_event_get(const tk_profile *p, tk_event_id e); /* NULL for 0 or unknown */
size_t tk_event_count(const tk_profile *p);                       /* ids are 1 … count */
/* Set the thread an event is drawn on (e.g. once its synthetic thread exists). */
void tk_event_set_thread(tk_profile *p, tk_event_id e, tk_thread_id t);
/* Give thread t's samples (those it has and those added later) to event e with a role; e = 0
 * takes them back. */
void tk_thread_set_event(tk_profile *p, tk_thread_id t, tk_event_id e, tk_thread_role role);

/* Attributes (see above). Strings are copied (interned in the profile). */
void tk_event_set_str(tk_profile *p, tk_event_id e, const char *key, const char *value);
void tk_event_set_num(tk_profile *p, tk_event_id e, const char *key, double value);
const char *tk_event_str(const tk_profile *p, tk_event_id e, const char *key); /* NULL: unset or a number */
double tk_event_num(const tk_profile *p, tk_event_id e, const char *key);      /* NAN: unset or a string */
typedef struct tk_event_attr {
	const char *key;
	const char *str; /* NULL for a number */
	double num;      /* NAN for a string */
} tk_event_attr;
size_t tk_event_attr_count(const tk_profile *p, tk_event_id e);
tk_event_attr tk_event_attr_at(const tk_profile *p, tk_event_id e, size_t i); /* in the order first set */

/* Copy event e of src into dst with its attributes (strings re-interned), drawn on dst's thread t
 * (TK_NO_THREAD for none); weight and samples start at 0 until dst's threads are given to it. For
 * transforms and passes that build a new profile from an old one. Returns the new id. */
tk_event_id tk_event_copy(tk_profile *dst, const tk_profile *src, tk_event_id e, tk_thread_id t);

/* ---- profile metadata ---- */
void tk_profile_set_unit(tk_profile *p, tk_unit u);
tk_unit tk_profile_unit(const tk_profile *p);
uint64_t tk_profile_weight(const tk_profile *p); /* Σ thread weights */
/* Multiply every weight (cells, threads, the total; not sample counts) by factor: how a reader that
 * meets a finer decimal fraction part way through an input (folded `31.23` after `19`) keeps its
 * weights exact integers. Returns 0, or -1 (nothing changed) if a weight would pass 2^64 - 1.
 * Such a profile's weights are in units of 10^-D of its unit, D being the meta key
 * "weight-decimals" (absent: 0); writers show them as exact decimals (tk_profile_weight_decimals). */
int tk_profile_scale_weights(tk_profile *p, uint64_t factor);
unsigned tk_profile_weight_decimals(const tk_profile *p); /* the meta key as a number, 0 if unset */
/* Non-zero when a sample was dropped because the profile's total weight would pass 2^64 - 1 (so
 * every total, which is at most the profile's, stays exact). Readers turn it into an error. */
int tk_profile_weight_overflow(const tk_profile *p);
uint64_t tk_profile_samples(const tk_profile *p);

/* Free-form key/value facts a reader found ("schema", "stack-encoding", "xcode-form",
 * "symbolicated", "run" …), shown by `tracekit info`. Setting a key again replaces it. */
void tk_profile_set_meta(tk_profile *p, const char *key, const char *value);
const char *tk_profile_meta(const tk_profile *p, const char *key); /* NULL if unset */
size_t tk_profile_meta_count(const tk_profile *p);
void tk_profile_meta_at(const tk_profile *p, size_t i, const char **key, const char **value);

/* Approximate heap bytes held by the model (for benchmarks and --stats). */
size_t tk_profile_memory(const tk_profile *p);

#ifdef __cplusplus
}
#endif
#endif
