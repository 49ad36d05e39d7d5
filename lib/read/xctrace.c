/*
 * The `xcrun xctrace export --xpath …` reader: time-profile, cpu-profile, counters-profile and
 * time-sample tables, every stack encoding from Xcode 12 to 27 (docs/xctrace-format.md: the format notes).
 *
 * It is written against the event interface of xml.h and streams: the document is fed to the
 * tokenizer in 256 KB chunks and each row is turned into one sample as soon as it closes.
 *
 * id/ref: xctrace numbers every defined element with one counter for the whole document, and a
 * later `<tag ref="N"/>` stands for the whole earlier `<tag id="N">` subtree. Each element's value
 * is computed when it closes (a thread's identity, a frame id, a stack id, a number…) and stored
 * under its id together with its tag, so a ref costs one lookup and a mismatching tag or an
 * unknown id is an error naming line:column.
 *
 * Memory rule: xctrace interns values (a repeated weight, core, thread, frame or stack is written
 * as a ref), so the ids it defines grow with the number of *distinct* values: threads, processes,
 * frames, binaries, paths, backtraces, fragments, weights, cores. Those are kept for the whole
 * document (about 32 bytes each, plus the model's own copy of frames and stacks). The one value
 * that is new on almost every row, `sample-time`, is kept only for the last SAMPLE_TIME_WINDOW
 * definitions; a ref to an older sample time is reported as an error ("outside the window")
 * instead of silently growing memory with the file. Parsed stacks are cached per backtrace id
 * (the stored value *is* the model's stack id), so a row that refs a known backtrace costs no
 * stack work at all.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read/internal.h"
#include "read/kdebug.h"
#include "read/xml.h"
#include "tracekit/read.h"
#include "util/hidx.h"
#include "util/mem.h"

/* what the error for another table names as readable */
#define SUPPORTED_SCHEMAS "time-profile, cpu-profile, counters-profile, time-sample"

#define CHUNK (256 * 1024)
#define SAMPLE_TIME_WINDOW 4096
#define MAX_DEPTH 256
#define MAX_PREAMBLE (1 << 20) /* diagnostics xctrace may print before `<?xml` */
/* Limits that keep memory bounded by distinct values, not by how long one value is: a stack of
 * more frames than this is refused (Instruments records at most a few thousand), and so is the
 * text of a number, path or name longer than MAX_TEXT. <text-addresses> is parsed as it streams
 * in, so its length is bounded by the frame limit alone. */
#define MAX_STACK_FRAMES 65536
#define MAX_TEXT (1 << 20)

/* ---- element names ---- */

enum {
	T_OTHER = 0, /* an element we do not interpret and that has no id/ref */
	T_TQR,
	T_TOC,
	T_NODE,
	T_SCHEMA,
	T_COL,
	T_MNEMONIC,
	T_ROW,
	T_SENTINEL,
	T_SAMPLE_TIME,
	T_THREAD,
	T_TID,
	T_PROCESS,
	T_PID,
	T_WEIGHT,
	T_CYCLE_WEIGHT,
	T_PMC_EVENT,
	T_BACKTRACE,
	T_TAGGED_BT,
	T_KPERF_BT,
	T_FRAME,
	T_BINARY,
	T_SOURCE,
	T_PATH,
	T_TEXT_ADDRESSES,
	T_TEXT_ADDRESS,
	/* read for nothing but their ids, named here so their refs skip the dynamic-name table */
	T_CORE,
	T_THREAD_STATE,
	T_DEVICE_SESSION,
	T_UINT64,
	T_PMC_EVENTS,
	T_BOOLEAN,
	T_REGISTER_CONTENT,
	T_TIME_SAMPLE_KIND,
	T_KNOWN_END /* dynamic codes for other element names with id/ref start here */
};

static const char *const known_names[] = {
    "",
    "trace-query-result",
    "trace-toc",
    "node",
    "schema",
    "col",
    "mnemonic",
    "row",
    "sentinel",
    "sample-time",
    "thread",
    "tid",
    "process",
    "pid",
    "weight",
    "cycle-weight",
    "pmc-event",
    "backtrace",
    "tagged-backtrace",
    "kperf-bt",
    "frame",
    "binary",
    "source",
    "path",
    "text-addresses",
    "text-address",
    "core",
    "thread-state",
    "device-session",
    "uint64",
    "pmc-events",
    "boolean",
    "register-content",
    "time-sample-kind",
};
_Static_assert(sizeof known_names / sizeof known_names[0] == T_KNOWN_END, "one name per known tag");

static int known_tag(const char *n, size_t l)
{
#define IS(s) (l == sizeof(s) - 1 && memcmp(n, s, l) == 0)
	switch (l) {
	case 3:
		if (IS("row"))
			return T_ROW;
		if (IS("tid"))
			return T_TID;
		if (IS("pid"))
			return T_PID;
		if (IS("col"))
			return T_COL;
		break;
	case 4:
		if (IS("core"))
			return T_CORE;
		if (IS("node"))
			return T_NODE;
		if (IS("path"))
			return T_PATH;
		break;
	case 5: return IS("frame") ? T_FRAME : T_OTHER;
	case 6:
		if (IS("uint64"))
			return T_UINT64;
		if (IS("thread"))
			return T_THREAD;
		if (IS("weight"))
			return T_WEIGHT;
		if (IS("binary"))
			return T_BINARY;
		if (IS("source"))
			return T_SOURCE;
		if (IS("schema"))
			return T_SCHEMA;
		break;
	case 7:
		if (IS("process"))
			return T_PROCESS;
		if (IS("boolean"))
			return T_BOOLEAN;
		break;
	case 8:
		if (IS("sentinel"))
			return T_SENTINEL;
		if (IS("kperf-bt"))
			return T_KPERF_BT;
		if (IS("mnemonic"))
			return T_MNEMONIC;
		break;
	case 9:
		if (IS("backtrace"))
			return T_BACKTRACE;
		if (IS("pmc-event"))
			return T_PMC_EVENT;
		if (IS("trace-toc"))
			return T_TOC;
		break;
	case 10: return IS("pmc-events") ? T_PMC_EVENTS : T_OTHER;
	case 11: return IS("sample-time") ? T_SAMPLE_TIME : T_OTHER;
	case 12:
		if (IS("cycle-weight"))
			return T_CYCLE_WEIGHT;
		if (IS("text-address"))
			return T_TEXT_ADDRESS;
		if (IS("thread-state"))
			return T_THREAD_STATE;
		break;
	case 14:
		if (IS("text-addresses"))
			return T_TEXT_ADDRESSES;
		if (IS("device-session"))
			return T_DEVICE_SESSION;
		break;
	case 16:
		if (IS("tagged-backtrace"))
			return T_TAGGED_BT;
		if (IS("register-content"))
			return T_REGISTER_CONTENT;
		if (IS("time-sample-kind"))
			return T_TIME_SAMPLE_KIND;
		break;
	case 18: return IS("trace-query-result") ? T_TQR : T_OTHER;
	}
	return T_OTHER;
#undef IS
}

/* ---- column roles and schemas ---- */

enum { R_NONE, R_TIME, R_THREAD, R_PROCESS, R_WEIGHT, R_STACK, R_KDEBUG /* a cell of a kdebug table row */ };

enum {
	ENC_TEXT_ADDRESSES = 1,
	ENC_BACKTRACE = 2,
	ENC_TAGGED = 4,
	ENC_TAGGED_FRAMES = 8,
	ENC_KPERF = 16,
};

typedef struct column {
	char mnemonic[64];
	int role;
} column;

/* ---- the reader's state ---- */

typedef struct idval {
	uint32_t id;
	uint32_t tag;
	uint64_t v;
} idval;

typedef struct thr {
	int64_t pid;
	uint64_t tid;
	tk_str name, proc;
	tk_thread_id tkid;
	int has_tkid;
} thr;

typedef struct proc {
	int64_t pid;
	tk_str name;
} proc;

typedef struct frag {
	size_t off, n;
} frag;

typedef struct elem {
	uint32_t tag;    /* T_* or a dynamic code (only when id or ref is present) */
	uint32_t id;     /* 0 if none */
	int is_ref;      /* <x ref="N"/>: value comes from the store */
	int role;        /* column role when this is a row cell */
	int want_text;   /* accumulate character data */
	int null;        /* sentinel, or a cell that stands for nothing */
	size_t text_off; /* start of this element's text in the text buffer */
	size_t fr_off;   /* start of this element's frames in the frame scratch */
	size_t ad_off;   /* start of this element's addresses in the address scratch */
	uint64_t v;      /* the element's value once computed (or from the ref) */
	/* what the element builds while it is open: one member per tag (by tag, or kdebug for a
	 * kdebug table cell) */
	union {
		struct {
			uint64_t addr;
			tk_binary_id binary;
			uint32_t line;
			tk_str name, file;
			tk_str hexname; /* name="0x…": the label only when no <binary> follows */
			int inlined;    /* inlined="1" */
		} frame;
		struct {
			uint64_t tid;
			int has_tid;
			int64_t pid;
			uint32_t proc;           /* index into procs + 1; 0 if none */
			size_t fmt_off, fmt_len; /* fmt, kept in the text buffer */
		} thread;
		struct {
			int64_t pid;
			tk_str name;
		} process;
		struct {
			tk_str file;
			uint32_t line;
		} source;
		struct { /* backtrace and tagged-backtrace */
			int has_frames, has_addrs, has_inner;
			uint32_t inner; /* tagged-backtrace: the inner backtrace's stack + 1 */
		} bt;
		struct {
			uint64_t pc;
			int has_pc;
		} kperf;
		struct {
			size_t start; /* its first address in fragvals */
		} addrs;
		struct {
			uint64_t hex; /* the number in fmt (kdebug-arg) */
			int has_hex;
		} kdebug;
	} u;
} elem;

typedef struct xr {
	tk_profile *p;
	const tk_read_options *o;
	tk_error *err;
	const char *name;
	tk_xml *x;
	/* element stack */
	elem *st;
	size_t depth, capst;
	/* buffers */
	char *text;
	size_t ntext, captext;
	tk_frame_id *fr;
	size_t nfr, capfr;
	uint64_t *ad;
	size_t nad, capad;
	/* id store: kept ids in a hash index; sample times in a window */
	idval *ids; /* open addressing, id 0 = empty */
	size_t nids;
	uint32_t id_mask;
	idval win[SAMPLE_TIME_WINDOW]; /* sample times, direct-mapped by id (id 0 = empty) */
	uint32_t max_id;
	/* dynamic element names (for id/ref checks on elements we do not interpret) */
	char *dyn;
	size_t ndyn, capdyn;
	struct dynname {
		size_t off, len;
	} * dynnames;
	size_t ndynnames, capdynnames;
	tk_hidx dyn_index;
	/* values */
	thr *thrs;
	size_t nthrs, capthrs;
	proc *procs;
	size_t nprocs, capprocs;
	frag *frags;
	size_t nfrags, capfrags;
	uint64_t *fragvals;
	size_t nfragvals, capfragvals;
	/* document */
	int root_seen;
	int in_node;
	char schema[64];
	int schema_ok;     /* the current node's schema has been read and is supported */
	int node_skipped;  /* the current node's schema is not one tracekit reads */
	char skipped[256]; /* the skipped schemas */
	uint64_t skipped_line, skipped_col;
	int schema_unit;
	column *cols;
	size_t ncols, capcols;
	int unit_set;
	tk_unit unit;
	char schemas[256];
	char xpaths[512];
	int enc;
	/* the row being read */
	int in_row;
	size_t row_cells;
	uint64_t row_time, row_weight;
	int row_has_time, row_has_weight, row_has_thread;
	uint32_t row_thread; /* index into thrs */
	uint32_t row_proc;   /* index into procs + 1; 0 if none */
	tk_stack_id row_stack;
	uint64_t rows, rows_kept;
	/* kdebug / kdebug-strings tables: image loads for pre-14.3 stacks (read/kdebug.c) */
	tk_kdebug *kd;
	int kd_table; /* TK_KD_* of the current node */
	int kd_row;   /* inside one of its rows */
} xr;

/* ---- errors ---- */

static int fail(xr *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(xr *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = tk_xml_fail(r->x, r->name, r->err, fmt, ap);
	va_end(ap);
	return rc;
}

static const char *tag_name(xr *r, uint32_t tag, int *len)
{
	if (tag < T_KNOWN_END) {
		*len = (int)strlen(known_names[tag]);
		return known_names[tag];
	}
	struct dynname *d = &r->dynnames[tag - T_KNOWN_END];
	*len = (int)d->len;
	return r->dyn + d->off;
}

/* ---- dynamic element names ---- */

static int dyn_eq(const void *ctx, uint32_t idx, const void *key)
{
	const xr *r = ctx;
	const struct dynname *k = key;
	const struct dynname *d = &r->dynnames[idx];
	return d->len == k->len && memcmp(r->dyn + d->off, (const char *)k->off, k->len) == 0;
}

static uint32_t dyn_code(xr *r, const char *n, size_t l)
{
	struct dynname key = {(size_t)n, l};
	uint64_t h = tk_hash_bytes(n, l, 7);
	uint32_t f = tk_hidx_find(&r->dyn_index, h, dyn_eq, r, &key);
	if (f != UINT32_MAX)
		return T_KNOWN_END + f;
	if (r->ndyn + l > r->capdyn)
		TK_GROW(r->dyn, r->capdyn, r->ndyn + l);
	memcpy(r->dyn + r->ndyn, n, l);
	if (r->ndynnames + 1 > r->capdynnames)
		TK_GROW(r->dynnames, r->capdynnames, r->ndynnames + 1);
	r->dynnames[r->ndynnames] = (struct dynname){r->ndyn, l};
	r->ndyn += l;
	tk_hidx_insert(&r->dyn_index, h, (uint32_t)r->ndynnames);
	return T_KNOWN_END + (uint32_t)r->ndynnames++;
}

/* ---- id store ----
 *
 * Kept ids live in one open-addressing table of idval entries (id 0 = empty), so a lookup
 * touches a single cache line: every row looks several ids up, which makes this the reader's
 * hottest structure. */

static inline uint32_t id_slot0(uint32_t id, uint32_t mask)
{
	return (uint32_t)((id * 0x9E3779B97F4A7C15ULL) >> 40) & mask;
}

static void id_rehash(xr *r)
{
	uint32_t ncap = r->id_mask ? (r->id_mask + 1) * 2 : 1024;
	idval *ns = tk_xcalloc(ncap, sizeof *ns);
	if (r->ids)
		for (uint32_t i = 0; i <= r->id_mask; i++)
			if (r->ids[i].id) {
				uint32_t k = id_slot0(r->ids[i].id, ncap - 1);
				while (ns[k].id)
					k = (k + 1) & (ncap - 1);
				ns[k] = r->ids[i];
			}
	free(r->ids);
	r->ids = ns;
	r->id_mask = ncap - 1;
}

/* Look an id up in the kept table (sample_time = 0) or the sample-time window (1). */
static inline const idval *id_find(xr *r, uint32_t id, int sample_time)
{
	if (sample_time) {
		const idval *w = &r->win[id & (SAMPLE_TIME_WINDOW - 1)];
		return w->id == id ? w : NULL;
	}
	if (!r->ids)
		return NULL;
	for (uint32_t k = id_slot0(id, r->id_mask);; k = (k + 1) & r->id_mask) {
		const idval *e = &r->ids[k];
		if (e->id == id)
			return e;
		if (!e->id)
			return NULL;
	}
}

static int id_store(xr *r, uint32_t id, uint32_t tag, uint64_t v)
{
	/* Duplicates are caught within each store; probing the other one too would cost a cache miss
	 * per row, and lookups are tag-directed, so a cross-store duplicate cannot be confused. */
	if (id_find(r, id, tag == T_SAMPLE_TIME)) {
		int l;
		const char *tn = tag_name(r, tag, &l);
		return fail(r, "<%.*s id=\"%u\">: id %u is defined twice", l, tn, id, id);
	}
	if (id > r->max_id)
		r->max_id = id;
	if (tag == T_SAMPLE_TIME) {
		/* direct-mapped by id: a sample time stays until a later one lands in its slot, i.e. for at
		 * least the next SAMPLE_TIME_WINDOW ids of the document */
		r->win[id & (SAMPLE_TIME_WINDOW - 1)] = (idval){id, tag, v};
		return 0;
	}
	if (!r->ids || (r->nids + 1) * 2 > (size_t)r->id_mask + 1)
		id_rehash(r);
	uint32_t k = id_slot0(id, r->id_mask);
	while (r->ids[k].id)
		k = (k + 1) & r->id_mask;
	r->ids[k] = (idval){id, tag, v};
	r->nids++;
	return 0;
}

static const idval *id_find_any(xr *r, uint32_t id)
{
	const idval *v = id_find(r, id, 0);
	return v ? v : id_find(r, id, 1);
}

/* ---- small parsers ---- */

static int parse_u64(const char *s, size_t n, uint64_t *out)
{
	while (n && (*s == ' ' || *s == '\n' || *s == '\t' || *s == '\r'))
		s++, n--;
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\n' || s[n - 1] == '\t' || s[n - 1] == '\r'))
		n--;
	if (!n)
		return -1;
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		unsigned d = (unsigned)(s[i] - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

/* ids and refs: short plain decimals, parsed without the general routine's trimming */
static inline int parse_id(const char *s, size_t n, uint32_t *out)
{
	if (n == 0 || n > 10)
		return -1;
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned d = (unsigned)(s[i] - '0');
		if (d > 9)
			return -1;
		v = v * 10 + d;
	}
	if (v == 0 || v > UINT32_MAX)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

static int parse_i64(const char *s, size_t n, int64_t *out)
{
	while (n && (*s == ' ' || *s == '\n' || *s == '\t' || *s == '\r'))
		s++, n--;
	int neg = n && *s == '-';
	uint64_t v;
	if (parse_u64(s + neg, n - (size_t)neg, &v) < 0 || v > (uint64_t)INT64_MAX)
		return -1;
	*out = neg ? -(int64_t)v : (int64_t)v;
	return 0;
}

static int parse_hex(const char *s, size_t n, uint64_t *out)
{
	if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2, n -= 2;
	if (!n || n > 16)
		return -1;
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		unsigned d;
		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			d = (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			d = (unsigned)(c - 'A' + 10);
		else
			return -1;
		v = v << 4 | d;
	}
	*out = v;
	return 0;
}

/* "0x1047b15cd": xctrace's name for a frame it could not symbolicate. */
static int is_hex_name(const char *s, size_t n)
{
	if (n < 3 || s[0] != '0' || s[1] != 'x')
		return 0;
	for (size_t i = 2; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f') || (s[i] >= 'A' && s[i] <= 'F')))
			return 0;
	return 1;
}

static const tk_xml_attr *attr(const tk_xml_attr *a, size_t n, const char *name)
{
	size_t l = strlen(name);
	for (size_t i = 0; i < n; i++)
		if (a[i].name_len == l && memcmp(a[i].name, name, l) == 0)
			return &a[i];
	return NULL;
}

static void rtrim(const char *s, size_t *n)
{
	while (*n && s[*n - 1] == ' ')
		(*n)--;
}

/* Strip a trailing " (0x1f2e)" or "  0x1f2e" thread id. */
static void strip_tid(const char *s, size_t *n)
{
	size_t l = *n;
	rtrim(s, &l);
	if (l && s[l - 1] == ')') {
		size_t k = l - 1;
		while (k && s[k - 1] != '(')
			k--;
		if (k && k >= 2 && s[k - 2] == ' ' && is_hex_name(s + k, l - 1 - k)) {
			l = k - 2;
			rtrim(s, &l);
			*n = l;
			return;
		}
	}
	size_t k = l;
	while (k && s[k - 1] != ' ')
		k--;
	if (is_hex_name(s + k, l - k)) {
		l = k;
		rtrim(s, &l);
		*n = l;
	}
}

/* The thread name inside fmt (docs/xctrace-format.md §4): drop " (<process>, pid: N)" and then the tid. */
static size_t thread_name_len(xr *r, const char *s, size_t n, tk_str procname)
{
	size_t l = n;
	rtrim(s, &l);
	if (l && s[l - 1] == ')') {
		/* find ", pid: " closest to the end, then the " (" that opens the process group */
		const char *pidp = NULL;
		for (size_t k = l; k >= 7; k--)
			if (memcmp(s + k - 7, ", pid: ", 7) == 0) {
				pidp = s + k - 7;
				break;
			}
		if (pidp) {
			size_t pl = tk_string_len(r->p, procname);
			const char *pn = tk_string(r->p, procname);
			size_t at = (size_t)(pidp - s);
			if (procname && at >= pl + 2 && memcmp(s + at - pl, pn, pl) == 0 && s[at - pl - 1] == '(' &&
			    s[at - pl - 2] == ' ') {
				l = at - pl - 2;
			} else {
				size_t k = at;
				while (k >= 2 && !(s[k - 1] == '(' && s[k - 2] == ' '))
					k--;
				if (k >= 2)
					l = k - 2;
			}
		}
	}
	strip_tid(s, &l);
	return l;
}

/* ---- stacks ---- */

static tk_frame_id leaf_flag(xr *r, tk_frame_id f)
{
	const tk_frame *fr = tk_frame_get(r->p, f);
	if (!fr || (fr->flags & TK_FRAME_LEAF_PC))
		return f;
	tk_frame c = *fr;
	c.flags |= TK_FRAME_LEAF_PC;
	return tk_frame_add(r->p, &c);
}

/* Build the stack from frames fr[off..] (leaf first). */
static tk_stack_id stack_from_frames(xr *r, size_t off)
{
	size_t n = r->nfr - off;
	if (!n)
		return 0;
	r->fr[off] = leaf_flag(r, r->fr[off]);
	/* Frames tagged inlined="1" (tracekit's symbolicated output) share their outer frame's address:
	 * a leaf's whole inline chain, outer frame included, stands for the sampled PC. */
	for (size_t i = off; i + 1 < r->nfr && (tk_frame_get(r->p, r->fr[i])->flags & TK_FRAME_INLINED); i++)
		r->fr[i + 1] = leaf_flag(r, r->fr[i + 1]);
	return tk_stack_from_leaf_first(r->p, r->fr + off, n);
}

/* Turn addresses ad[off..] (leaf first) into frames at the end of fr, then a stack. */
static tk_stack_id stack_from_addrs(xr *r, size_t ad_off, int drop_trailing_zero)
{
	size_t n = r->nad - ad_off;
	if (drop_trailing_zero && n && r->ad[r->nad - 1] == 0)
		n--;
	size_t off = r->nfr;
	if (r->nfr + n > r->capfr)
		TK_GROW(r->fr, r->capfr, r->nfr + n);
	for (size_t i = 0; i < n; i++) {
		tk_frame f = {.addr = r->ad[ad_off + i], .flags = i == 0 ? TK_FRAME_LEAF_PC : 0};
		r->fr[r->nfr++] = tk_frame_add(r->p, &f);
	}
	tk_stack_id s = n ? tk_stack_from_leaf_first(r->p, r->fr + off, n) : 0;
	r->nfr = off;
	return s;
}

static int too_deep(xr *r, const char *what)
{
	return fail(r, "<%s>: more than %d frames in one stack (tracekit's limit; is the export corrupt?)", what,
	            MAX_STACK_FRAMES);
}

/* Append fragment fi's addresses to the stack that started at ad_off. */
static int push_addrs_of_frag(xr *r, uint32_t fi, size_t ad_off, const char *what)
{
	frag *f = &r->frags[fi];
	if (!f->n) /* an empty fragment (fragvals may still be unallocated) */
		return 0;
	if (r->nad - ad_off + f->n > MAX_STACK_FRAMES)
		return too_deep(r, what);
	if (r->nad + f->n > r->capad)
		TK_GROW(r->ad, r->capad, r->nad + f->n);
	memcpy(r->ad + r->nad, r->fragvals + f->off, f->n * sizeof *r->ad);
	r->nad += f->n;
	return 0;
}

/* ---- schema ---- */

static int schema_unit(const char *s, tk_unit *u)
{
	if (strcmp(s, "time-profile") == 0)
		*u = TK_UNIT_NS;
	else if (strcmp(s, "cpu-profile") == 0)
		*u = TK_UNIT_CYCLES;
	else if (strcmp(s, "counters-profile") == 0)
		*u = TK_UNIT_EVENTS;
	else if (strcmp(s, "time-sample") == 0)
		*u = TK_UNIT_SAMPLES;
	else
		return -1;
	return 0;
}

static int finish_schema(xr *r)
{
	tk_unit u;
	if ((r->kd_table = tk_kdebug_table(r->schema)) != TK_KD_NONE) {
		r->node_skipped = 1; /* no samples in it; its rows go to read/kdebug.c */
		if (!r->kd)
			r->kd = tk_kdebug_new();
		return 0;
	}
	if (schema_unit(r->schema, &u) < 0) {
		/* An xpath union can export other tables next to a profile (os-signpost + cpu-profile):
		 * skip them, but keep the first one's position for the error if nothing readable is found. */
		r->node_skipped = 1;
		if (!r->skipped[0]) {
			uint64_t col = 0;
			tk_xml_position(r->x, &r->skipped_line, &col);
			r->skipped_col = col;
		}
		if (!strstr(r->skipped, r->schema)) {
			size_t l = strlen(r->skipped);
			snprintf(r->skipped + l, sizeof r->skipped - l, "%s%s", l ? "," : "", r->schema);
		}
		return 0;
	}
	int sample = u == TK_UNIT_SAMPLES;
	int have[6] = {0};
	for (size_t i = 0; i < r->ncols; i++) {
		column *c = &r->cols[i];
		const char *m = c->mnemonic;
		c->role = R_NONE;
		if (strcmp(m, "time") == 0)
			c->role = R_TIME;
		else if (strcmp(m, "thread") == 0)
			c->role = R_THREAD;
		else if (strcmp(m, "process") == 0)
			c->role = R_PROCESS;
		else if (!sample && strcmp(m, "weight") == 0)
			c->role = R_WEIGHT;
		else if ((!sample && strcmp(m, "stack") == 0) || (sample && strcmp(m, "cp-user-callstack") == 0))
			c->role = R_STACK;
		if (c->role != R_NONE && have[c->role]++)
			return fail(r, "schema '%s' has two '%s' columns", r->schema, m);
	}
	if (!have[R_THREAD])
		return fail(r, "schema '%s' has no 'thread' column", r->schema);
	if (!have[R_STACK])
		return fail(r, "schema '%s' has no '%s' column", r->schema, sample ? "cp-user-callstack" : "stack");
	if (!sample && !have[R_WEIGHT])
		return fail(r, "schema '%s' has no 'weight' column", r->schema);
	if (r->unit_set && r->unit != u)
		return fail(r, "the document mixes tables with different units (%s and %s)", tk_unit_name(r->unit),
		            tk_unit_name(u));
	r->unit = u;
	r->unit_set = 1;
	r->schema_ok = 1;
	if (!strstr(r->schemas, r->schema)) {
		size_t l = strlen(r->schemas);
		snprintf(r->schemas + l, sizeof r->schemas - l, "%s%s", l ? "," : "", r->schema);
	}
	return 0;
}

/* ---- events ---- */

static elem *top(xr *r)
{
	return r->depth ? &r->st[r->depth - 1] : NULL;
}

static int tag_needs_text(uint32_t t)
{
	switch (t) {
	case T_MNEMONIC:
	case T_SAMPLE_TIME:
	case T_TID:
	case T_PID:
	case T_WEIGHT:
	case T_CYCLE_WEIGHT:
	case T_PMC_EVENT:
	case T_PATH:
	case T_TEXT_ADDRESSES:
	case T_TEXT_ADDRESS: return 1;
	}
	return 0;
}

static int on_start(void *ctx, const char *name, size_t nl, const tk_xml_attr *at, size_t na)
{
	xr *r = ctx;
	if (r->depth >= MAX_DEPTH)
		return fail(r, "elements nested deeper than %d", MAX_DEPTH);
	elem *parent = top(r);
	uint32_t tag = (uint32_t)known_tag(name, nl);
	const tk_xml_attr *aid = NULL, *aref = NULL;
	for (size_t i = 0; i < na; i++) {
		if (at[i].name_len == 2 && memcmp(at[i].name, "id", 2) == 0)
			aid = &at[i];
		else if (at[i].name_len == 3 && memcmp(at[i].name, "ref", 3) == 0)
			aref = &at[i];
	}
	if (tag == T_OTHER && (aid || aref))
		tag = dyn_code(r, name, nl);

	if (!r->root_seen) {
		r->root_seen = 1;
		if (tag == T_TOC)
			return fail(r, "this is a table of contents (`xctrace export --toc`), not a table export; "
			               "`tracekit info` shows it, and `xctrace export --xpath` exports a table");
		if (tag != T_TQR && nl == 3 && memcmp(name, "svg", 3) == 0)
			return fail(r,
			            "an SVG image (a rendered flame graph?), not an xctrace export: tracekit reads the "
			            "folded stacks it was drawn from, not the picture");
		if (tag != T_TQR)
			return fail(r,
			            "not an xctrace table export: the root element is <%.*s>, not <trace-query-result>",
			            (int)(nl > 60 ? 60 : nl), name);
	}

	if (r->depth + 1 > r->capst)
		TK_GROW(r->st, r->capst, r->depth + 1);
	elem *e = &r->st[r->depth++];
	parent = r->depth >= 2 ? &r->st[r->depth - 2] : NULL;
	/* (a memset here compiled to `rep stos`, which showed up in profiles) */
	*e = (elem){.tag = tag, .text_off = r->ntext, .fr_off = r->nfr, .ad_off = r->nad};

	if (aid) {
		uint32_t v;
		if (parse_id(aid->value, aid->value_len, &v) < 0)
			return fail(r, "<%.*s>: bad id \"%.*s\"", (int)nl, name,
			            (int)(aid->value_len > 40 ? 40 : aid->value_len), aid->value);
		e->id = v;
	}
	if (aref) {
		uint32_t v;
		if (aid)
			return fail(r, "<%.*s> has both id and ref", (int)nl, name);
		if (parse_id(aref->value, aref->value_len, &v) < 0)
			return fail(r, "<%.*s>: bad ref \"%.*s\"", (int)nl, name,
			            (int)(aref->value_len > 40 ? 40 : aref->value_len), aref->value);
		const idval *iv = id_find(r, v, tag == T_SAMPLE_TIME);
		if (!iv)
			iv = id_find_any(r, v); /* for the message: an id of another tag */
		if (!iv) {
			if (tag == T_SAMPLE_TIME && v <= r->max_id)
				return fail(r,
				            "<sample-time ref=\"%llu\"> refers to a sample time more than %d ids back "
				            "(tracekit keeps only recent sample times) or one never defined",
				            (unsigned long long)v, SAMPLE_TIME_WINDOW);
			return fail(r, "<%.*s ref=\"%llu\"> refers to id %llu, which is not defined before this point",
			            (int)nl, name, (unsigned long long)v, (unsigned long long)v);
		}
		if (iv->tag != tag) {
			int l;
			const char *tn = tag_name(r, iv->tag, &l);
			return fail(r, "<%.*s ref=\"%llu\"> refers to a <%.*s>, not a <%.*s>", (int)nl, name,
			            (unsigned long long)v, l, tn, (int)nl, name);
		}
		e->is_ref = 1;
		e->v = iv->v;
	}

	/* row cells get their column's role */
	if (parent && parent->tag == T_ROW && r->in_row) {
		if (r->row_cells >= r->ncols)
			return fail(r, "<row> has more cells than the schema's %zu columns", r->ncols);
		e->role = r->cols[r->row_cells++].role;
	}
	if (tag == T_SENTINEL)
		e->null = 1;
	if (r->kd_row && parent && parent->tag == T_ROW)
		e->role = R_KDEBUG;
	if (e->is_ref)
		return 0;

	e->want_text = tag_needs_text(tag);
	if (e->role == R_KDEBUG && (tag == T_OTHER || tag >= T_KNOWN_END)) {
		/* a kdebug cell: the number is the text, or the hex in fmt (kdebug-arg) */
		const tk_xml_attr *f = attr(at, na, "fmt");
		e->want_text = 1;
		if (f && tk_kdebug_parse_hex(f->value, f->value_len, &e->u.kdebug.hex) == 0)
			e->u.kdebug.has_hex = 1;
	}
	switch (tag) {
	case T_NODE: {
		if (!parent || parent->tag != T_TQR)
			break;
		r->in_node = 1;
		r->schema_ok = 0;
		r->node_skipped = 0;
		r->kd_table = TK_KD_NONE;
		r->schema[0] = 0;
		r->ncols = 0;
		const tk_xml_attr *xp = attr(at, na, "xpath");
		if (xp) {
			size_t l = strlen(r->xpaths);
			snprintf(r->xpaths + l, sizeof r->xpaths - l, "%s%.*s", l ? " | " : "", (int)xp->value_len,
			         xp->value);
		}
		break;
	}
	case T_SCHEMA: {
		if (!parent || parent->tag != T_NODE)
			break;
		const tk_xml_attr *sn = attr(at, na, "name");
		if (!sn)
			return fail(r, "<schema> without a name");
		snprintf(r->schema, sizeof r->schema, "%.*s", (int)sn->value_len, sn->value);
		r->ncols = 0;
		break;
	}
	case T_COL:
		if (parent && parent->tag == T_SCHEMA) {
			if (r->ncols + 1 > r->capcols)
				TK_GROW(r->cols, r->capcols, r->ncols + 1);
			memset(&r->cols[r->ncols], 0, sizeof r->cols[0]);
			r->ncols++;
		}
		break;
	case T_ROW:
		if (!parent || parent->tag != T_NODE)
			break;
		if (r->node_skipped) {
			if (r->kd_table) {
				r->kd_row = 1;
				tk_kdebug_row_begin(r->kd, r->kd_table);
			}
			break;
		}
		if (!r->schema_ok)
			return strstr(r->xpaths, "/details")
			           /* `…/tracks/track/details/detail` (docs/xctrace-format.md §8.7) */
			           ? fail(r, "unsupported table schema 'track detail' (an Allocations List, Leaks or "
			                     "VM Tracker "
			                     "list: rows without stacks or a <schema>); supported: " SUPPORTED_SCHEMAS)
			           : fail(r, "<row> before the table's <schema>");
		r->in_row = 1;
		r->row_cells = 0;
		r->row_has_time = r->row_has_weight = r->row_has_thread = 0;
		r->row_stack = 0;
		r->row_weight = 0;
		r->row_proc = 0;
		break;
	case T_THREAD: {
		const tk_xml_attr *f = attr(at, na, "fmt");
		if (f) {
			if (r->ntext + f->value_len > r->captext)
				TK_GROW(r->text, r->captext, r->ntext + f->value_len);
			memcpy(r->text + r->ntext, f->value, f->value_len);
			e->u.thread.fmt_off = r->ntext;
			e->u.thread.fmt_len = f->value_len;
			r->ntext += f->value_len;
		}
		e->u.thread.pid = -1;
		break;
	}
	case T_PROCESS: {
		e->u.process.pid = -1;
		const tk_xml_attr *f = attr(at, na, "fmt");
		if (f) {
			/* "a.out (34963)" */
			size_t l = f->value_len;
			const char *s = f->value;
			if (l && s[l - 1] == ')') {
				size_t k = l - 1;
				while (k && s[k - 1] != '(')
					k--;
				int64_t pid;
				if (k >= 2 && s[k - 2] == ' ' && parse_i64(s + k, l - 1 - k, &pid) == 0) {
					e->u.process.pid = pid;
					l = k - 2;
				}
			}
			e->u.process.name = tk_intern(r->p, s, l);
		}
		break;
	}
	case T_FRAME: {
		const tk_xml_attr *nm = attr(at, na, "name"), *ad = attr(at, na, "addr");
		if (ad && parse_hex(ad->value, ad->value_len, &e->u.frame.addr) < 0)
			return fail(r, "<frame>: bad addr \"%.*s\"", (int)(ad->value_len > 40 ? 40 : ad->value_len),
			            ad->value);
		if (nm && nm->value_len && !is_hex_name(nm->value, nm->value_len))
			e->u.frame.name = tk_intern(r->p, nm->value, nm->value_len);
		else if (nm && nm->value_len)
			e->u.frame.hexname = tk_intern(r->p, nm->value, nm->value_len);
		/* inlined="1": tracekit's own tag for frames an inline expansion made (symbol.h) */
		const tk_xml_attr *il = attr(at, na, "inlined");
		e->u.frame.inlined = il && il->value_len == 1 && il->value[0] == '1';
		break;
	}
	case T_BINARY: {
		tk_binary b = {0};
		const tk_xml_attr *a;
		if ((a = attr(at, na, "name")))
			b.name = tk_intern(r->p, a->value, a->value_len);
		if ((a = attr(at, na, "path")))
			b.path = tk_intern(r->p, a->value, a->value_len);
		if ((a = attr(at, na, "UUID")))
			b.uuid = tk_intern(r->p, a->value, a->value_len);
		if ((a = attr(at, na, "arch")))
			b.arch = tk_intern(r->p, a->value, a->value_len);
		if ((a = attr(at, na, "load-addr")) && parse_hex(a->value, a->value_len, &b.load_addr) < 0)
			return fail(r, "<binary>: bad load-addr \"%.*s\"", (int)(a->value_len > 40 ? 40 : a->value_len),
			            a->value);
		e->v = tk_binary_add(r->p, &b);
		break;
	}
	case T_TEXT_ADDRESSES: e->u.addrs.start = r->nfragvals; break;
	case T_SOURCE: {
		const tk_xml_attr *l = attr(at, na, "line");
		uint64_t v = 0;
		if (l && (parse_u64(l->value, l->value_len, &v) < 0 || v > UINT32_MAX))
			return fail(r, "<source>: bad line \"%.*s\"", (int)(l->value_len > 40 ? 40 : l->value_len),
			            l->value);
		e->u.source.line = (uint32_t)v;
		break;
	}
	}
	return 0;
}

/* Parse the whole addresses of a <text-addresses> element's text into fragvals (from its start on),
 * keeping a number cut by the end of this piece of text for the next one (all of it when final). */
static int addrs_consume(xr *r, elem *e, int final)
{
	const char *t = r->text + e->text_off;
	size_t tl = r->ntext - e->text_off, i = 0;
	for (;;) {
		while (i < tl && (t[i] == ' ' || t[i] == '\n' || t[i] == '\t' || t[i] == '\r'))
			i++;
		if (i >= tl)
			break;
		size_t j = i;
		while (j < tl && !(t[j] == ' ' || t[j] == '\n' || t[j] == '\t' || t[j] == '\r'))
			j++;
		if (j == tl && !final && j - i <= 20)
			break; /* may continue in the next piece */
		uint64_t v;
		if (parse_u64(t + i, j - i, &v) < 0)
			return fail(r, "<text-addresses>: expected decimal addresses, found \"%.*s\"",
			            (int)(j - i > 40 ? 40 : j - i), t + i);
		if (r->nfragvals - e->u.addrs.start >= MAX_STACK_FRAMES)
			return too_deep(r, "text-addresses");
		if (r->nfragvals + 1 > r->capfragvals)
			TK_GROW(r->fragvals, r->capfragvals, r->nfragvals + 1);
		r->fragvals[r->nfragvals++] = v;
		i = j;
	}
	memmove(r->text + e->text_off, t + i, tl - i);
	r->ntext = e->text_off + (tl - i);
	return 0;
}

static int on_text(void *ctx, const char *s, size_t n)
{
	xr *r = ctx;
	elem *e = top(r);
	if (!e || !e->want_text)
		return 0;
	if (r->ntext - e->text_off + n > MAX_TEXT && e->tag != T_TEXT_ADDRESSES) {
		int l;
		const char *tn = tag_name(r, e->tag, &l);
		return fail(r, "<%.*s>: text longer than %d bytes", l, tn, MAX_TEXT);
	}
	if (r->ntext + n > r->captext)
		TK_GROW(r->text, r->captext, r->ntext + n);
	memcpy(r->text + r->ntext, s, n);
	r->ntext += n;
	if (e->tag == T_TEXT_ADDRESSES && r->ntext - e->text_off >= 4096)
		return addrs_consume(r, e, 0);
	return 0;
}

/* Compute a defined element's value when it closes. */
static int finish_value(xr *r, elem *e)
{
	const char *t = r->text + e->text_off;
	size_t tl = r->ntext - e->text_off;
	switch (e->tag) {
	case T_SAMPLE_TIME:
	case T_WEIGHT:
	case T_CYCLE_WEIGHT:
	case T_PMC_EVENT:
	case T_TID:
	case T_TEXT_ADDRESS:
		if (parse_u64(t, tl, &e->v) < 0)
			return fail(r, "<%s>: expected a non-negative integer, found \"%.*s\"", known_names[e->tag],
			            (int)(tl > 40 ? 40 : tl), t);
		break;
	case T_PID: {
		int64_t v;
		if (parse_i64(t, tl, &v) < 0)
			return fail(r, "<pid>: expected an integer, found \"%.*s\"", (int)(tl > 40 ? 40 : tl), t);
		e->v = (uint64_t)v;
		break;
	}
	case T_PATH: e->v = tk_intern(r->p, t, tl); break;
	case T_TEXT_ADDRESSES: {
		size_t start = e->u.addrs.start;
		if (addrs_consume(r, e, 1) < 0)
			return -1;
		if (r->nfrags + 1 > r->capfrags)
			TK_GROW(r->frags, r->capfrags, r->nfrags + 1);
		r->frags[r->nfrags] = (frag){start, r->nfragvals - start};
		e->v = r->nfrags++;
		break;
	}
	case T_PROCESS:
		if (r->nprocs + 1 > r->capprocs)
			TK_GROW(r->procs, r->capprocs, r->nprocs + 1);
		r->procs[r->nprocs] = (proc){e->u.process.pid, e->u.process.name};
		e->v = r->nprocs++;
		break;
	case T_THREAD: {
		tk_str pname = 0;
		if (e->u.thread.proc) {
			pname = r->procs[e->u.thread.proc - 1].name;
			if (e->u.thread.pid < 0)
				e->u.thread.pid = r->procs[e->u.thread.proc - 1].pid;
		}
		size_t l = thread_name_len(r, r->text + e->u.thread.fmt_off, e->u.thread.fmt_len, pname);
		tk_str nm = tk_intern(r->p, r->text + e->u.thread.fmt_off, l);
		if (!e->u.thread.has_tid) {
			/* no <tid>: fall back to the hex tid in fmt */
			const char *s = r->text + e->u.thread.fmt_off + l;
			size_t rest = e->u.thread.fmt_len - l;
			const char *h = memmem(s, rest, "0x", 2);
			if (h) {
				size_t k = 2;
				while (h + k < s + rest &&
				       ((h[k] >= '0' && h[k] <= '9') || (h[k] >= 'a' && h[k] <= 'f')))
					k++;
				parse_hex(h, k, &e->u.thread.tid);
			}
		}
		if (r->nthrs + 1 > r->capthrs)
			TK_GROW(r->thrs, r->capthrs, r->nthrs + 1);
		r->thrs[r->nthrs] = (thr){e->u.thread.pid, e->u.thread.tid, nm, pname, 0, 0};
		e->v = r->nthrs++;
		break;
	}
	case T_FRAME: {
		/* A hex name with a <binary> stays unnamed so symbolication can name it from the image; without
		 * one nothing can, and Instruments shows the exported name (a caller's is addr - 1). */
		tk_str name = e->u.frame.name ? e->u.frame.name : e->u.frame.binary ? 0 : e->u.frame.hexname;
		tk_frame f = {.addr = e->u.frame.addr,
		              .name = name,
		              .binary = e->u.frame.binary,
		              .file = e->u.frame.file,
		              .line = e->u.frame.line,
		              .flags = e->u.frame.inlined ? TK_FRAME_INLINED : 0};
		e->v = tk_frame_add(r->p, &f);
		break;
	}
	case T_BACKTRACE:
		if (e->u.bt.has_addrs) {
			e->v = stack_from_addrs(r, e->ad_off, 1);
			r->enc |= ENC_TEXT_ADDRESSES;
		} else {
			e->v = stack_from_frames(r, e->fr_off);
			/* inside a tagged-backtrace this is the 26.4 form, counted there */
			if (!(r->depth >= 2 && r->st[r->depth - 2].tag == T_TAGGED_BT))
				r->enc |= ENC_BACKTRACE;
		}
		break;
	case T_TAGGED_BT:
		if (e->u.bt.has_inner) {
			e->v = e->u.bt.inner - 1;
			r->enc |= ENC_TAGGED;
		} else if (e->u.bt.has_addrs) {
			e->v = stack_from_addrs(r, e->ad_off, 1);
			r->enc |= ENC_TAGGED;
		} else {
			e->v = stack_from_frames(r, e->fr_off);
			r->enc |= ENC_TAGGED_FRAMES;
		}
		break;
	case T_KPERF_BT: {
		/* Timer samples: text-address = the PC, text-addresses = the callers then a 0.
		 * Stackshots: text-addresses already starts with the PC (docs/xctrace-format.md §7). */
		size_t n = r->nad - e->ad_off;
		if (e->u.kperf.has_pc && !(n && r->ad[e->ad_off] == e->u.kperf.pc)) {
			if (r->nad + 1 > r->capad)
				TK_GROW(r->ad, r->capad, r->nad + 1);
			memmove(r->ad + e->ad_off + 1, r->ad + e->ad_off, n * sizeof *r->ad);
			r->ad[e->ad_off] = e->u.kperf.pc;
			r->nad++;
		}
		e->v = stack_from_addrs(r, e->ad_off, 1);
		r->enc |= ENC_KPERF;
		break;
	}
	}
	return 0;
}

/* Hand a finished (or ref'd) child to its parent. */
static int deliver(xr *r, elem *parent, elem *c)
{
	switch (parent->tag) {
	case T_ROW:
		if (!r->in_row)
			break;
		switch (c->role) {
		case R_TIME:
			if (c->null)
				break;
			if (c->tag != T_SAMPLE_TIME)
				return fail(r, "unexpected <%s> in the time column",
				            c->tag < T_KNOWN_END ? known_names[c->tag] : "?");
			r->row_time = c->v;
			r->row_has_time = 1;
			break;
		case R_THREAD:
			if (c->null)
				break;
			if (c->tag != T_THREAD)
				return fail(r, "expected a <thread> in the thread column");
			r->row_thread = (uint32_t)c->v;
			r->row_has_thread = 1;
			break;
		case R_PROCESS:
			if (!c->null && c->tag == T_PROCESS) {
				r->row_proc = (uint32_t)c->v + 1;
			}
			break;
		case R_WEIGHT:
			if (c->null)
				break;
			if (c->tag != T_WEIGHT && c->tag != T_CYCLE_WEIGHT && c->tag != T_PMC_EVENT)
				return fail(r, "expected <weight>, <cycle-weight> or <pmc-event> in the weight column");
			r->row_weight = c->v;
			r->row_has_weight = 1;
			break;
		case R_STACK:
			if (c->null)
				break;
			if (c->tag != T_BACKTRACE && c->tag != T_TAGGED_BT && c->tag != T_KPERF_BT)
				return fail(
				    r, "expected a <backtrace>, <tagged-backtrace> or <kperf-bt> in the stack column");
			r->row_stack = (tk_stack_id)c->v;
			break;
		}
		break;
	case T_MNEMONIC: break;
	case T_COL: break;
	case T_THREAD:
		if (c->tag == T_TID) {
			parent->u.thread.tid = c->v;
			parent->u.thread.has_tid = 1;
		} else if (c->tag == T_PROCESS) {
			parent->u.thread.proc = (uint32_t)c->v + 1;
		}
		break;
	case T_PROCESS:
		if (c->tag == T_PID)
			parent->u.process.pid = (int64_t)c->v;
		break;
	case T_FRAME:
		if (c->tag == T_BINARY)
			parent->u.frame.binary = (tk_binary_id)c->v;
		else if (c->tag == T_SOURCE && !c->is_ref) {
			parent->u.frame.file = c->u.source.file;
			parent->u.frame.line = c->u.source.line;
		}
		break;
	case T_SOURCE:
		if (c->tag == T_PATH)
			parent->u.source.file = (tk_str)c->v;
		break;
	case T_BACKTRACE:
	case T_TAGGED_BT:
		if (c->tag == T_FRAME) {
			if (r->nfr - parent->fr_off >= MAX_STACK_FRAMES)
				return too_deep(r, known_names[parent->tag]);
			if (r->nfr + 1 > r->capfr)
				TK_GROW(r->fr, r->capfr, r->nfr + 1);
			r->fr[r->nfr++] = (tk_frame_id)c->v;
			parent->u.bt.has_frames = 1;
		} else if (c->tag == T_TEXT_ADDRESSES) {
			if (push_addrs_of_frag(r, (uint32_t)c->v, parent->ad_off, known_names[parent->tag]) < 0)
				return -1;
			parent->u.bt.has_addrs = 1;
		} else if (c->tag == T_BACKTRACE && parent->tag == T_TAGGED_BT) {
			parent->u.bt.has_inner = 1;
			parent->u.bt.inner = (uint32_t)c->v + 1;
		}
		break;
	case T_KPERF_BT:
		if (c->tag == T_TEXT_ADDRESSES) {
			if (push_addrs_of_frag(r, (uint32_t)c->v, parent->ad_off, "kperf-bt") < 0)
				return -1;
		} else if (c->tag == T_TEXT_ADDRESS) {
			parent->u.kperf.pc = c->v;
			parent->u.kperf.has_pc = 1;
		}
		break;
	}
	return 0;
}

static int finish_row(xr *r)
{
	r->in_row = 0;
	r->rows++;
	if (r->row_cells != r->ncols)
		return fail(r, "<row> has %zu cells but the schema has %zu columns", r->row_cells, r->ncols);
	if (r->row_has_time && (r->row_time < r->o->time_from || r->row_time >= r->o->time_to))
		return 0;
	tk_thread_id t;
	if (r->row_has_thread) {
		thr *th = &r->thrs[r->row_thread];
		if (!th->has_tkid && th->pid < 0 && r->row_proc) {
			/* a thread without its own <process>: take the row's process column */
			th->pid = r->procs[r->row_proc - 1].pid;
			th->proc = r->procs[r->row_proc - 1].name;
		}
		if (!th->has_tkid) {
			th->tkid = tk_thread_get_or_add(r->p, th->pid, th->tid, th->name, th->proc);
			th->has_tkid = 1;
		}
		t = th->tkid;
	} else {
		t = tk_thread_get_or_add(r->p, -1, 0, 0, 0);
	}
	uint64_t w = r->unit == TK_UNIT_SAMPLES ? 1 : r->row_weight;
	tk_sample_add(r->p, t, r->row_stack, w, r->row_has_time ? r->row_time : UINT64_MAX);
	r->rows_kept++;
	return 0;
}

static int on_end(void *ctx, const char *name, size_t nl)
{
	xr *r = ctx;
	elem *e = top(r);
	if (!e)
		return 0;
	if (!e->is_ref && !e->null) {
		if (e->role == R_KDEBUG && (e->tag == T_OTHER || e->tag >= T_KNOWN_END)) {
			const char *t = r->text + e->text_off;
			size_t tl = r->ntext - e->text_off;
			e->v = tk_kdebug_string_cell(name, nl)
			           ? tk_intern(r->p, t, tl)
			           : tk_kdebug_number(t, tl, e->u.kdebug.has_hex, e->u.kdebug.hex);
		}
		if (e->tag == T_MNEMONIC) {
			elem *p = r->depth >= 2 ? &r->st[r->depth - 2] : NULL;
			if (p && p->tag == T_COL && r->ncols) {
				size_t tl = r->ntext - e->text_off;
				snprintf(r->cols[r->ncols - 1].mnemonic, sizeof r->cols[0].mnemonic, "%.*s", (int)tl,
				         r->text + e->text_off);
			}
		} else if (e->tag == T_SCHEMA) {
			elem *p = r->depth >= 2 ? &r->st[r->depth - 2] : NULL;
			if (p && p->tag == T_NODE && finish_schema(r) < 0)
				return -1;
		} else if (e->tag == T_ROW && r->in_row) {
			if (finish_row(r) < 0)
				return -1;
		} else if (e->tag == T_ROW && r->kd_row) {
			r->kd_row = 0;
			tk_kdebug_row_end(r->kd);
		} else if (e->tag == T_NODE) {
			elem *p = r->depth >= 2 ? &r->st[r->depth - 2] : NULL;
			if (p && p->tag == T_TQR) {
				if (!r->schema[0])
					return fail(r, "<node> without a <schema>");
				r->in_node = 0;
			}
		}
		if (finish_value(r, e) < 0)
			return -1;
		if (e->id && id_store(r, e->id, e->tag, e->v) < 0)
			return -1;
	}
	/* restore scratch space to where this element started (its value is computed) */
	r->ntext = e->text_off;
	r->nfr = e->fr_off;
	r->nad = e->ad_off;
	r->depth--;
	if (e->role == R_KDEBUG && !e->null)
		tk_kdebug_cell(r->kd, name, nl, e->v);
	elem *p = top(r);
	if (p && deliver(r, p, e) < 0)
		return -1;
	return 0;
}

/* ---- driver ---- */

static const tk_xml_events xctrace_events = {on_start, on_text, on_end};

static int xctrace_sniff(const unsigned char *head, size_t n)
{
	/* Exports may start with diagnostic text before `<?xml` (docs/xctrace-format.md §1). */
	return memmem(head, n, "<?xml", 5) || memmem(head, n, "<trace-query-result", 19) ||
	       memmem(head, n, "<trace-toc", 10);
}

/* Read the leading bytes until the document starts; returns the offset of `<?xml` / `<trace-`
 * in *buf (which holds *len bytes) and the number of newlines before it. */
int tk_xctrace_skip_preamble(tk_input *in, char **buf, size_t *len, size_t *start, uint64_t *lines, tk_error *err)
{
	size_t cap = CHUNK;
	*buf = tk_xmalloc(cap);
	*len = 0;
	for (;;) {
		if (*len == cap) {
			cap *= 2;
			*buf = tk_xrealloc(*buf, cap);
		}
		ptrdiff_t got = tk_input_read(in, *buf + *len, cap - *len, err);
		if (got < 0)
			return -1;
		*len += (size_t)got;
		const char *a = memmem(*buf, *len, "<?xml", 5), *b = memmem(*buf, *len, "<trace-", 7);
		const char *s = a && b ? (a < b ? a : b) : a ? a : b;
		/* a document that starts with '<' (or whitespace and then '<') is fed as is so that the
		 * tokenizer reports what is wrong with it */
		if (!s && *len) {
			size_t i = 0;
			while (i < *len &&
			       ((*buf)[i] == ' ' || (*buf)[i] == '\n' || (*buf)[i] == '\t' || (*buf)[i] == '\r'))
				i++;
			if (i < *len && (*buf)[i] == '<')
				s = *buf;
		}
		if (s) {
			*start = (size_t)(s - *buf);
			*lines = 0;
			for (const char *q = *buf; q < s; q++)
				*lines += *q == '\n';
			return 0;
		}
		if (got == 0) {
			if (*len == 0)
				return tk_error_set(err, "%s: empty input", tk_input_name(in));
			return tk_error_set(err,
			                    "%s: no XML document found (expected `<?xml` or `<trace-query-result>`)",
			                    tk_input_name(in));
		}
		if (*len > MAX_PREAMBLE)
			return tk_error_set(err, "%s: no XML document in the first %d bytes", tk_input_name(in),
			                    MAX_PREAMBLE);
	}
}

static void set_meta(xr *r)
{
	char buf[64];
	tk_profile_set_meta(r->p, "format", "xctrace export");
	tk_profile_set_meta(r->p, "schema", r->schemas);
	const char *enc = "none (no stacks)", *form = "unknown";
	int n = 0;
	static const struct {
		int bit;
		const char *enc, *form;
	} encs[] = {
	    {ENC_TEXT_ADDRESSES, "text-addresses", "before Xcode 14.3 (address fragments, no symbols)"},
	    {ENC_BACKTRACE, "backtrace", "Xcode 14.3 to 26.0 (backtrace/frame/binary)"},
	    {ENC_TAGGED, "tagged-backtrace", "Xcode 26.4 (tagged-backtrace around a backtrace)"},
	    {ENC_TAGGED_FRAMES, "tagged-backtrace-frames", "Xcode 27 (frames directly under tagged-backtrace)"},
	    {ENC_KPERF, "kperf-bt", "raw kperf samples (text addresses, no symbols)"},
	};
	char encbuf[160] = "", formbuf[400] = "";
	for (size_t i = 0; i < sizeof encs / sizeof encs[0]; i++)
		if (r->enc & encs[i].bit) {
			size_t l = strlen(encbuf), fl = strlen(formbuf);
			snprintf(encbuf + l, sizeof encbuf - l, "%s%s", n ? "," : "", encs[i].enc);
			snprintf(formbuf + fl, sizeof formbuf - fl, "%s%s", n ? "; " : "", encs[i].form);
			n++;
		}
	if (n) {
		enc = encbuf;
		form = formbuf;
	}
	tk_profile_set_meta(r->p, "stack-encoding", enc);
	tk_profile_set_meta(r->p, "xcode-form", form);
	/* symbolicated: over the frames the stacks use */
	size_t named = 0, unnamed = 0;
	for (size_t s = 1; s <= tk_stack_count(r->p); s++) {
		const tk_stack_node *sn = tk_stack_get(r->p, (tk_stack_id)s);
		const tk_frame *f = tk_frame_get(r->p, sn->frame);
		const char *nm = f && f->name ? tk_string(r->p, f->name) : NULL;
		if (nm && !is_hex_name(nm, strlen(nm))) /* a hex name kept as the label is not a symbol */
			named++;
		else
			unnamed++;
	}
	tk_profile_set_meta(r->p, "symbolicated",
	                    !unnamed ? (named ? "yes" : "no (no frames)")
	                    : named  ? "partly"
	                             : "no");
	if (r->xpaths[0]) {
		tk_profile_set_meta(r->p, "xpath", r->xpaths);
		/* "//trace-toc[1]/run[3]/data[1]/table[13]": the run and the table's position in the toc */
		static const char *const keys[][2] = {{"run[", "run"}, {"table[", "table"}};
		for (size_t i = 0; i < 2; i++) {
			const char *at = strstr(r->xpaths, keys[i][0]);
			if (!at)
				continue;
			at += strlen(keys[i][0]);
			int k = 0;
			while (at[k] >= '0' && at[k] <= '9' && k < 12)
				k++;
			snprintf(buf, sizeof buf, "%.*s", k, at);
			tk_profile_set_meta(r->p, keys[i][1], buf);
		}
	}
	snprintf(buf, sizeof buf, "%llu", (unsigned long long)r->rows);
	tk_profile_set_meta(r->p, "rows", buf);
	if (r->skipped[0])
		tk_profile_set_meta(r->p, "skipped-tables", r->skipped);
	if (r->rows_kept != r->rows) {
		snprintf(buf, sizeof buf, "%llu", (unsigned long long)r->rows_kept);
		tk_profile_set_meta(r->p, "rows-in-time-range", buf);
	}
}

static void xr_free(xr *r)
{
	tk_xml_free(r->x);
	free(r->st);
	free(r->text);
	free(r->fr);
	free(r->ad);
	free(r->ids);
	free(r->dyn);
	free(r->dynnames);
	tk_hidx_free(&r->dyn_index);
	free(r->thrs);
	free(r->procs);
	free(r->frags);
	free(r->fragvals);
	free(r->cols);
	tk_kdebug_free(r->kd);
	free(r);
}

static int xctrace_read(tk_profile *p, tk_input *in, const tk_read_options *o, tk_error *err)
{
	xr *r = tk_xcalloc(1, sizeof *r);
	r->p = p;
	r->o = o;
	r->err = err;
	r->name = tk_input_name(in);
	/* scratch buffers start non-empty so that offsets into them are always valid pointers */
	TK_GROW(r->text, r->captext, 4096);
	TK_GROW(r->fr, r->capfr, 256);
	TK_GROW(r->ad, r->capad, 256);
	TK_GROW(r->st, r->capst, 32);
	char *buf = NULL;
	size_t len = 0, start = 0;
	uint64_t lines = 0;
	int rc = -1;
	if (tk_xctrace_skip_preamble(in, &buf, &len, &start, &lines, err) < 0)
		goto out;
	tk_xml_kind kind = o->tokenizer == TK_READ_TOKENIZER_LIBXML2 ? TK_XML_LIBXML2 : TK_XML_FAST;
	r->x = tk_xml_new(kind, &xctrace_events, r, r->name, 1 + lines);
	if (tk_xml_feed(r->x, buf + start, len - start, 0, err) < 0)
		goto out;
	buf = tk_xrealloc(buf, CHUNK);
	for (;;) {
		if (o->progress)
			o->progress(o->progress_ctx, tk_input_consumed(in), tk_input_total(in));
		ptrdiff_t got = tk_input_read(in, buf, CHUNK, err);
		if (got < 0)
			goto out;
		if (tk_xml_feed(r->x, buf, (size_t)got, got == 0, err) < 0)
			goto out;
		if (got == 0)
			break;
	}
	if (!r->unit_set && r->skipped[0])
		rc = tk_error_set(err, "%s:%llu:%llu: unsupported table schema '%s'; supported: %s", r->name,
		                  (unsigned long long)r->skipped_line, (unsigned long long)r->skipped_col, r->skipped,
		                  SUPPORTED_SCHEMAS);
	else if (!r->unit_set && strstr(r->xpaths, "/details"))
		/* `…/tracks/track/details/detail` exports (Allocations List, Leaks, VM Tracker) have attribute
		 * rows and no <schema> (docs/xctrace-format.md §8.7) */
		rc = tk_error_set(err,
		                  "%s: unsupported table schema 'track detail' (%s: an Allocations List, Leaks or VM "
		                  "Tracker list, rows without stacks); supported: %s",
		                  r->name, r->xpaths, SUPPORTED_SCHEMAS);
	else if (!r->unit_set)
		rc = tk_error_set(err, "%s: the export has no table (no <node> with a <schema>)", r->name);
	else {
		tk_profile_set_unit(p, r->unit);
		tk_profile_set_meta(p, "tokenizer", tk_xml_kind_name(kind));
		set_meta(r);
		if (r->kd) {
			char nb[32];
			snprintf(nb, sizeof nb, "%zu", tk_kdebug_finish(r->kd, p));
			tk_profile_set_meta(p, "kdebug-images", nb);
		}
		rc = 0;
	}
out:
	free(buf);
	xr_free(r);
	return rc;
}

const tk_reader tk_reader_xctrace = {"xctrace", xctrace_sniff, xctrace_read};
