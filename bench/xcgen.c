/*
 * xcgen — a fast, deterministic generator of large `xctrace export` XML (time-profile, cpu-profile,
 * counters-profile tables) that follows the real format byte for byte (see
 * docs/xctrace-format.md), plus the ground truth computed by the generator itself.
 *
 * Why a generator: the real exports we have are 20 KB – 1.8 MB. Benchmarks need 100 MB – 1 GB files
 * whose expected output is known without trusting any parser, and tests need every Xcode encoding ×
 * schema combination. The truth (--truth) comes from the generator's own model, never from parsing
 * what it wrote.
 *
 * Faithfulness points (each one is something a parser can get wrong):
 *   - exact skeleton: declaration, <trace-query-result>, <node xpath='…'> (single quotes), <schema>
 *     with <col>s, one <row> per line, the first row on the <node> line, "</node></trace-query-result>\n";
 *   - one id counter for the whole document, pre-order, no gaps; refs always point backwards, to the
 *     same tag, and stand for the whole subtree (the process inside the first thread of a row is
 *     ref'd by the process column of the same row);
 *   - frames, binaries, source paths, backtraces and text-address fragments are per process: the same
 *     library frame is defined again (new id) in another process; cores, states, weights and the
 *     device-session are shared by the whole document;
 *   - thread fmt per Xcode form ("Main Thread  0x…", "Main Thread 0x…", "Main Thread (0x…)");
 *   - 1–40 frame stacks that share prefixes, with recursion (a frame repeated, <frame ref> runs);
 *   - weights mostly 1 ms but not all; <sentinel/> stacks; symbol names needing &amp; &lt; &gt; &quot;
 *     and non-ASCII UTF-8; unsymbolicated frames (hex names) with and without <binary>;
 *   - leaf addr ≡ 1 (mod 4) and caller addr ≡ 0 (mod 4) in the 14.3+ forms; in text-addresses the leaf
 *     ≡ 0 and callers ≡ 2 (mod 4), fragments shared between stacks and a trailing 0.
 *
 * Memory is bounded by the model (threads, processes, distinct stacks), never by the output size, so
 * 1 GB and more stream through a fixed buffer.
 *
 * Truth (--truth FILE): the folded stacks `tracekit collapse` must print, sorted bytewise
 * (LC_ALL=C sort), identical lines merged:
 *     THREADNAME tid=TID;root;…;leaf WEIGHT
 * where WEIGHT is the summed raw weight (ns, cycles or events); an unsymbolicated frame (hex name) is
 * "0x" + lowercase hex of its addr when it has a <binary>, its exported hex name (leaf: addr, caller:
 * addr - 1) when it has none, as Instruments shows it; a text-addresses frame is "0x" + lowercase hex of the value as
 * recorded (the trailing 0 end marker is not a frame); a sentinel stack is the thread frame alone.
 * FILE.threads gets one line per thread: pid, tid, weight, samples, name (tab separated).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* ------------------------------------------------------------------ utilities */

static void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("xcgen: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(2);
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		die("out of memory (%zu bytes)", n);
	return p;
}

static void *xcalloc(size_t n, size_t sz)
{
	void *p = calloc(n ? n : 1, sz ? sz : 1);
	if (!p)
		die("out of memory (%zu x %zu bytes)", n, sz);
	return p;
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		die("out of memory (%zu bytes)", n);
	return p;
}

static char *xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	return memcpy(xmalloc(n), s, n);
}

static char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	char *s = xmalloc((size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return s;
}

/* XML escaping as xctrace does it: & < > " (no numeric references). */
static char *xml_escape(const char *s)
{
	size_t n = 0;
	for (const char *p = s; *p; p++)
		n += *p == '&' ? 5 : *p == '<' || *p == '>' ? 4 : *p == '"' ? 6 : 1;
	char *o = xmalloc(n + 1), *q = o;
	for (const char *p = s; *p; p++) {
		switch (*p) {
		case '&': memcpy(q, "&amp;", 5), q += 5; break;
		case '<': memcpy(q, "&lt;", 4), q += 4; break;
		case '>': memcpy(q, "&gt;", 4), q += 4; break;
		case '"': memcpy(q, "&quot;", 6), q += 6; break;
		default: *q++ = *p;
		}
	}
	*q = 0;
	return o;
}

/* xoshiro256** seeded through splitmix64: fast, and the same stream on every platform. */
static uint64_t rng_s[4];
static uint64_t splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}
static void rng_seed(uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		rng_s[i] = splitmix(&seed);
}
static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}
static inline uint64_t rnd(void)
{
	uint64_t r = rotl(rng_s[1] * 5, 7) * 9, t = rng_s[1] << 17;
	rng_s[2] ^= rng_s[0], rng_s[3] ^= rng_s[1], rng_s[1] ^= rng_s[2], rng_s[0] ^= rng_s[3];
	rng_s[2] ^= t, rng_s[3] = rotl(rng_s[3], 45);
	return r;
}
/* uniform in [0, n) */
static inline uint32_t rn(uint32_t n)
{
	return n ? (uint32_t)(((rnd() >> 32) * (uint64_t)n) >> 32) : 0;
}
/* true with probability num/1000 */
static inline int chance(uint32_t per_mille)
{
	return rn(1000) < per_mille;
}
/* Skewed pick in [0, n): low indexes are hot, like real profiles where a few stacks dominate. */
static inline uint32_t skewed(uint32_t n)
{
	uint32_t a = rn(n), b = rn(n);
	return a < b ? a : b;
}

/* ------------------------------------------------------------------ output */

static struct {
	char *buf;
	size_t len, cap;
	uint64_t total;
	FILE *f;
	gzFile gz;
	const char *path;
} out;

static void out_flush(void)
{
	if (!out.len)
		return;
	if (out.gz) {
		if (gzwrite(out.gz, out.buf, (unsigned)out.len) != (int)out.len)
			die("%s: gzip write failed", out.path);
	} else if (fwrite(out.buf, 1, out.len, out.f) != out.len) {
		die("%s: write failed: %s", out.path, strerror(errno));
	}
	out.total += out.len;
	out.len = 0;
}
static inline void ensure(size_t n)
{
	if (out.len + n > out.cap)
		out_flush();
	if (n > out.cap)
		die("internal: write of %zu bytes exceeds the buffer", n);
}
static inline void put(const char *s, size_t n)
{
	ensure(n);
	memcpy(out.buf + out.len, s, n);
	out.len += n;
}
#define PUTS(lit) put(lit, sizeof lit - 1)
static inline void puts_(const char *s)
{
	put(s, strlen(s));
}
static inline void putu(uint64_t v)
{
	char tmp[24], *p = tmp + sizeof tmp;
	do
		*--p = (char)('0' + v % 10);
	while (v /= 10);
	put(p, (size_t)(tmp + sizeof tmp - p));
}

/* <TAG ref="ID"/>: how every element already defined is written again. */
#define put_ref(tag, id)                                                                                               \
	do {                                                                                                           \
		PUTS("<" tag " ref=\"");                                                                               \
		putu(id);                                                                                              \
		PUTS("\"/>");                                                                                          \
	} while (0)
static inline void putx(uint64_t v) /* 0x + lowercase hex */
{
	char tmp[24], *p = tmp + sizeof tmp;
	do
		*--p = "0123456789abcdef"[v & 15];
	while (v >>= 4);
	*--p = 'x', *--p = '0';
	put(p, (size_t)(tmp + sizeof tmp - p));
}
static inline uint64_t bytes_written(void)
{
	return out.total + out.len;
}

/* ------------------------------------------------------------------ options */

enum enc { ENC_TEXT, ENC_BT, ENC_TAGGED, ENC_TAGGED27 };
enum schema { SCH_TIME, SCH_CPU, SCH_COUNTERS };

static struct {
	enum enc enc;
	enum schema schema;
	uint64_t size, rows;
	uint32_t threads, processes, stacks, per_thread;
	uint64_t seed;
	int gzip;
	const char *out, *truth, *truth_threads;
	int xcode26_0; /* backtrace form: thread fmt of Xcode 26.0 instead of 14.x */
} opt = {ENC_TAGGED, SCH_TIME, 0, 0, 16, 4, 2000, 200, 1, 0, "-", NULL, NULL, -1};

static uint64_t parse_size(const char *s)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || v < 0)
		die("bad size '%s' (expected e.g. 100M, 1G, 200K, 12345)", s);
	double m = 1;
	switch (*end) {
	case 'k':
	case 'K':
		m = 1e3;
		end++;
		break;
	case 'm':
	case 'M':
		m = 1e6;
		end++;
		break;
	case 'g':
	case 'G':
		m = 1e9;
		end++;
		break;
	case 0: break;
	default: die("bad size suffix in '%s' (K, M or G, decimal)", s);
	}
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end)
		die("bad size '%s'", s);
	return (uint64_t)(v * m);
}

static uint64_t parse_u(const char *name, const char *s, uint64_t lo, uint64_t hi)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		die("--%s: expected an integer in [%" PRIu64 ", %" PRIu64 "], got '%s'", name, lo, hi, s);
	return v;
}

static void usage(FILE *f)
{
	fputs("usage: xcgen [options] [-o OUT.xml]\n"
	      "  --encoding text-addresses|backtrace|tagged|tagged27   stack form (pre-14.3, 14.3-26.0, 26.4, 27)\n"
	      "  --schema time-profile|cpu-profile|counters-profile\n"
	      "  --size N[K|M|G]    approximate output bytes (default 10M)   --rows N   exact row count\n"
	      "  --threads N (16)   --processes N (4)   --distinct-stacks N (2000)   --seed N (1)\n"
	      "  --stacks-per-thread N (200)   working set of each thread among its process's stacks\n"
	      "  --xcode26.0        backtrace form with the Xcode 26.0 thread fmt (default: by seed parity)\n"
	      "  --gzip             gzip the output\n"
	      "  --truth FILE       folded ground truth (as `tracekit collapse` prints it, sorted);\n"
	      "                     per-thread totals go to FILE.threads (or --truth-threads FILE)\n",
	      f);
}

/* ------------------------------------------------------------------ model */

typedef struct {
	const char *raw; /* UTF-8 as the reader should decode it */
	char *xml;       /* escaped for an attribute */
} name_t;

typedef struct {
	char *xml_def; /* `name="…" UUID="…" arch="…" load-addr="…" path="…"` */
	uint64_t base;
	int is_main;
} binary_t;

typedef struct {
	int32_t sym; /* index into names, -1 = unsymbolicated (hex name) */
	int32_t bin; /* index into the process's binaries, -1 = none */
	int32_t src; /* index into the process's source paths, -1 = none */
	uint32_t line;
	uint64_t addr;    /* as written in addr= (or as the text-addresses value) */
	uint64_t hexname; /* the hex name of an unsymbolicated frame */
} frame_t;

/* A chain is a root-side piece of stack shared by many stacks: its own frames (root first) hang
 * under a parent chain. In text-addresses form each chain is one fragment. */
typedef struct {
	int32_t parent;
	uint32_t depth; /* frames from the root down to and including this chain */
	uint32_t nfr;
	uint32_t *fr; /* frame indexes, root first */
} chain_t;

/* The leaf-side piece: leaf frame plus a few callers. Shared between stacks (so in text-addresses
 * form a leaf-side fragment can be a ref, as in real files). */
typedef struct {
	uint32_t nfr;
	uint32_t *fr; /* root first; the last one is the leaf */
} leafpiece_t;

typedef struct {
	int32_t chain; /* -1: the stack is the leaf piece alone */
	uint32_t leaf;
	uint32_t depth;
} stack_t_;

typedef struct {
	char *name_raw;
	char *name_xml;
	int64_t pid;
	int is_kernel;
	binary_t *bins;
	uint32_t nbins;
	char **paths_xml;
	uint32_t npaths;
	frame_t *frames; /* callers first, then leaves */
	uint32_t ncaller, nleaf;
	chain_t *chains;
	uint32_t nchains;
	leafpiece_t *leaves;
	uint32_t nleaves;
	stack_t_ *stacks;
	uint32_t nstacks;
	/* ids once defined in the document (0 = not yet) */
	uint64_t id, *bin_id, *path_id, *frame_id, *chain_frag_id, *leaf_frag_id, *bt_id, *tbt_id;
	char **bt_fmt; /* "leaf ← (N other frames)", escaped, per stack */
} process_t;

typedef struct {
	uint32_t proc;
	uint64_t tid;
	char *name_raw;
	char *fmt_xml;     /* thread fmt, escaped */
	uint32_t hot;      /* relative sampling rate */
	uint32_t ws_start; /* working set: stacks ws_start .. ws_start + ws_len - 1 (mod the process's count) */
	uint32_t ws_len;
	uint64_t id, tid_id;
	uint64_t weight, samples;
} thread_t;

static name_t *names;
static uint32_t nnames;
static process_t *procs;
static thread_t *threads;
static uint64_t next_id = 1;

static const char *const RAW_SYMBOLS[] = {
    "mach_msg2_trap",
    "__psynch_cvwait",
    "__semwait_signal",
    "kevent_id",
    "__workq_kernreturn",
    "_dispatch_lane_serial_drain",
    "_dispatch_client_callout",
    "_dispatch_root_queue_drain",
    "_dispatch_worker_thread2",
    "CFRunLoopRunSpecific",
    "__CFRunLoopRun",
    "__CFRunLoopDoSources0",
    "-[NSApplication run]",
    "-[AppDelegate application:didFinishLaunchingWithOptions:]",
    "+[NSString stringWithFormat:]",
    "-[NSObject(NSKeyValueObserving) observeValueForKeyPath:ofObject:change:context:]",
    "objc_msgSend",
    "malloc",
    "_platform_memmove",
    "free",
    "std::__1::vector<int, std::__1::allocator<int> >::push_back(int const&)",
    "std::__1::basic_string<char, std::__1::char_traits<char>, std::__1::allocator<char> >::append(char const*)",
    "std::__1::__hash_table<std::__1::__hash_value_type<int, float>, std::__1::hash<int> >::find<int>(int const&)",
    "operator<<(std::__1::basic_ostream<char>&, Point const&)",
    "Matrix<float, 4, 4>::operator*(Matrix<float, 4, 4> const&) const",
    "bool std::__1::operator==<char>(std::__1::basic_string<char> const&, char const*)",
    "operator\"\" _kb(unsigned long long)",
    "Iterator<T>::operator->() const",
    "a && b || c < d > e",
    "closure #1 in ContentView.body.getter",
    "specialized Array._copyToContiguousArray()",
    "protocol witness for Sequence.makeIterator() in conformance [A]",
    "$s4main3fooyyF",
    "rust_app::compute::h9a3b1c2d4e5f6071",
    "<core::ops::range::Range<T> as core::iter::range::RangeIteratorImpl>::spec_next",
    "core::cmp::impls::_<impl core::cmp::PartialOrd for i32>::lt",
    "naïve_résumé_parse",
    "Δt::update(double)",
    "処理::実行()",
    "emoji_🔥_handler",
    "Straße::größe() const",
    "µs_timer_tick",
    "dyld4::prepare(dyld4::APIs&, mach_o::UnsafeHeader const*)",
    "dyld4::PrebuiltLoader::loadDependents(Diagnostics&, dyld4::RuntimeState&, dyld4::Loader::LoadOptions const&)",
};

static const char *const NS[] = {"engine", "render", "net", "db", "ui", "audio", "std::__1", "Wörk", "café", "io"};
static const char *const CLS[] = {"Parser",
                                  "Vector<int, std::allocator<int> >",
                                  "Map<K&, V*>",
                                  "Buffer",
                                  "Task",
                                  "Scene",
                                  "Node<Edge<float> >",
                                  "Queue<std::pair<int, float> >",
                                  "Codec",
                                  "Renderer"};
static const char *const METH[] = {"parse(char const*, unsigned long)",
                                   "operator<<(std::ostream&, Foo const&)",
                                   "run()",
                                   "operator->() const",
                                   "step(float&)",
                                   "résumé()",
                                   "draw(Rect const&) const",
                                   "operator()()",
                                   "update",
                                   "flush(bool) &&",
                                   "encode<true>(Span<uint8_t> const&)",
                                   "visit(Visitor&) const",
                                   "operator\"\" _ms(unsigned long long)"};

static void build_names(void)
{
	uint32_t nraw = sizeof RAW_SYMBOLS / sizeof *RAW_SYMBOLS;
	uint32_t ngen = 3000;
	nnames = nraw + ngen;
	names = xcalloc(nnames, sizeof *names);
	for (uint32_t i = 0; i < nraw; i++)
		names[i].raw = RAW_SYMBOLS[i];
	for (uint32_t i = 0; i < ngen; i++) {
		const char *ns = NS[rn(sizeof NS / sizeof *NS)], *cls = CLS[rn(sizeof CLS / sizeof *CLS)];
		const char *m = METH[rn(sizeof METH / sizeof *METH)];
		switch (rn(4)) {
		case 0: names[nraw + i].raw = xasprintf("%s::%s::%s", ns, cls, m); break;
		case 1: names[nraw + i].raw = xasprintf("%s::%s%u::%s", ns, cls, i, m); break;
		case 2: names[nraw + i].raw = xasprintf("%s_fn_%u", ns, i); break;
		default:
			names[nraw + i].raw =
			    xasprintf("-[%sController%u handle%s:]", cls[0] == 'M' ? "Map" : "View", i, ns);
		}
	}
	for (uint32_t i = 0; i < nnames; i++)
		names[i].xml = xml_escape(names[i].raw);
}

/* Fixed symbol indexes used for roots. */
enum { SYM_START = 0 };
static int32_t sym_index(const char *raw)
{
	for (uint32_t i = 0; i < nnames; i++)
		if (!strcmp(names[i].raw, raw))
			return (int32_t)i;
	return -1;
}

static char *uuid_str(void)
{
	uint64_t a = rnd(), b = rnd();
	return xasprintf("%08" PRIX64 "-%04" PRIX64 "-%04" PRIX64 "-%04" PRIX64 "-%012" PRIX64, a >> 32,
	                 (a >> 16) & 0xffff, a & 0xffff, b >> 48, b & (uint64_t)0xffffffffffffull);
}

/* Shared-cache libraries: same UUID and load address in every process (as on a real Mac), which is
 * exactly the case where a naive parser would merge by content across processes. */
typedef struct {
	const char *name, *path;
	char *uuid;
	uint64_t base;
} syslib_t;
static syslib_t syslibs[] = {
    {"dyld", "/usr/lib/dyld", NULL, 0},
    {"libsystem_kernel.dylib", "/usr/lib/system/libsystem_kernel.dylib", NULL, 0},
    {"libsystem_pthread.dylib", "/usr/lib/system/libsystem_pthread.dylib", NULL, 0},
    {"libdispatch.dylib", "/usr/lib/system/libdispatch.dylib", NULL, 0},
    {"CoreFoundation", "/System/Library/Frameworks/CoreFoundation.framework/Versions/A/CoreFoundation", NULL, 0},
    {"libc++.1.dylib", "/usr/lib/libc++.1.dylib", NULL, 0},
    {"AppKit", "/System/Library/Frameworks/AppKit.framework/Versions/C/AppKit", NULL, 0},
    {"libobjc.A.dylib", "/usr/lib/libobjc.A.dylib", NULL, 0},
};
#define NSYSLIBS (sizeof syslibs / sizeof *syslibs)

static const char *const PROC_NAMES[] = {"MyApp",      "a.out", "Café Øst",          "R&D <Tool>",
                                         "rust_test2", "java",  "WebKit.WebContent", "swift-frontend"};
static const char *const THREAD_NAMES[] = {"Java: DefaultDispatcher-worker-25",
                                           "com.apple.NSEventThread",
                                           "caulk.messenger.shared:17",
                                           "AURemoteIO::IOThread",
                                           "Wörker-αβγ ✓",
                                           "pool<T&> #2",
                                           "tokio-runtime-worker (io)",
                                           "_pthread_start",
                                           "start_wqthread",
                                           "com.apple.root.user-initiated-qos",
                                           "ThreadJavaMain",
                                           "Java: C2 CompilerThread0"};

static uint64_t align_addr(uint64_t a, int leaf)
{
	/* 14.3+ forms: leaf = PC+1 (≡1 mod 4), callers = return address (≡0 mod 4).
	 * text-addresses form (as in the real pre-14.3 fixture): leaf ≡0, callers ≡2 (mod 4). */
	a &= ~(uint64_t)3;
	if (opt.enc == ENC_TEXT)
		return leaf ? a : a + 2;
	return leaf ? a + 1 : a;
}

static void make_frame(process_t *p, frame_t *f, int leaf)
{
	/* pick a binary: mostly the app or a few libs */
	uint32_t b = chance(450) ? 0 : 1 + rn(p->nbins - 1);
	f->bin = (int32_t)b;
	f->sym = (int32_t)rn(nnames);
	uint64_t off = 0x1000 + ((uint64_t)rn(0x3fffff) & ~(uint64_t)3);
	f->addr = align_addr(p->bins[b].base + off, leaf);
	f->src = -1;
	f->line = 0;
	uint32_t r = rn(1000);
	if (r < 40) {
		/* unsymbolicated, no binary (sample before dyld registered the image, JIT code) */
		f->sym = -1;
		f->bin = -1;
		f->addr = align_addr(0x100000000ull + ((uint64_t)rn(0x3ffffff) << 4), leaf);
	} else if (r < 70) {
		f->sym = -1; /* unsymbolicated, with a binary (like the dyld leaf in the rust fixture) */
	}
	/* hex name: leaf name == addr, caller name == addr - 1 (both seen in real files) */
	f->hexname = leaf || opt.enc == ENC_TEXT ? f->addr : f->addr - 1;
	if (f->sym >= 0 && p->bins[b].is_main && p->npaths && chance(500)) {
		f->src = (int32_t)rn(p->npaths);
		f->line = 1 + rn(2000);
	}
}

static uint32_t *new_frames(process_t *p, uint32_t n, uint32_t *out_n, int with_leaf)
{
	/* n caller frames (root first), optionally recursive, then a leaf */
	uint32_t cap = n + 16 + 1, k = 0;
	uint32_t *fr = xmalloc(cap * sizeof *fr);
	while (k < n) {
		uint32_t f = rn(p->ncaller);
		if (chance(80) && k + 2 < n) {
			/* direct recursion: the same frame again and again (<frame ref> runs) */
			uint32_t rep = 2 + rn(n - k - 1);
			for (uint32_t i = 0; i < rep && k < n; i++)
				fr[k++] = f;
		} else if (chance(60) && k >= 2) {
			/* mutual recursion: a b a */
			fr[k] = fr[k - 2];
			k++;
		} else {
			fr[k++] = f;
		}
	}
	if (with_leaf)
		fr[k++] = p->ncaller + rn(p->nleaf);
	*out_n = k;
	return fr;
}

static void build_process(process_t *p, uint32_t pi, uint32_t nstacks)
{
	p->is_kernel = opt.processes > 1 && pi == 0;
	if (p->is_kernel) {
		p->name_raw = xstrdup("kernel");
		p->pid = 0;
	} else {
		p->name_raw =
		    xstrdup(PROC_NAMES[(pi - (opt.processes > 1)) % (sizeof PROC_NAMES / sizeof *PROC_NAMES)]);
		p->pid = 1000 + pi * 7919 + rn(500);
	}
	p->name_xml = xml_escape(p->name_raw);

	/* binaries: [0] the main executable (per process), then the shared-cache libraries */
	p->nbins = 1 + NSYSLIBS;
	p->bins = xcalloc(p->nbins, sizeof *p->bins);
	uint64_t mbase = 0x100000000ull + ((uint64_t)rn(0x4000) << 14);
	char *uuid = uuid_str();
	char *path = p->is_kernel ? xstrdup("/System/Library/Kernels/kernel.release.t8142")
	                          : xasprintf("/Users/dev/Build/Products/Release/%s", p->name_raw);
	char *pathx = xml_escape(path), *namex = xml_escape(p->name_raw);
	p->bins[0].xml_def = xasprintf("name=\"%s\" UUID=\"%s\" arch=\"arm64\" load-addr=\"0x%" PRIx64 "\" path=\"%s\"",
	                               namex, uuid, mbase, pathx);
	p->bins[0].base = mbase;
	p->bins[0].is_main = 1;
	free(uuid), free(path), free(pathx), free(namex);
	for (uint32_t i = 0; i < NSYSLIBS; i++) {
		p->bins[1 + i].xml_def =
		    xasprintf("name=\"%s\" UUID=\"%s\" arch=\"arm64e\" load-addr=\"0x%" PRIx64 "\" path=\"%s\"",
		              syslibs[i].name, syslibs[i].uuid, syslibs[i].base, syslibs[i].path);
		p->bins[1 + i].base = syslibs[i].base;
	}
	p->npaths = opt.enc == ENC_TEXT ? 0 : 6;
	p->paths_xml = xcalloc(p->npaths ? p->npaths : 1, sizeof *p->paths_xml);
	for (uint32_t i = 0; i < p->npaths; i++) {
		char *s = xasprintf("/Users/dev/src/%s/module_%u%s.cpp", p->name_raw, i, i == 3 ? "_ü&ß" : "");
		p->paths_xml[i] = xml_escape(s);
		free(s);
	}

	/* frames */
	p->ncaller = 200 + nstacks / 2;
	p->nleaf = 60 + nstacks / 4;
	p->frames = xcalloc(p->ncaller + p->nleaf, sizeof *p->frames);
	for (uint32_t i = 0; i < p->ncaller + p->nleaf; i++)
		make_frame(p, &p->frames[i], i >= p->ncaller);
	/* Roots look real: frame 0 = start (dyld), 1 = main (app), 2 = thread_start, 3 = _pthread_start */
	static const char *const roots[] = {"start", "main", "thread_start", "_pthread_start"};
	for (uint32_t i = 0; i < 4; i++) {
		frame_t *f = &p->frames[i];
		f->sym = sym_index(roots[i]);
		if (f->sym < 0) { /* "start" etc. are not in RAW_SYMBOLS on purpose: add on first use */
			nnames++;
			names = xrealloc(names, nnames * sizeof *names);
			names[nnames - 1].raw = roots[i];
			names[nnames - 1].xml = xml_escape(roots[i]);
			f->sym = (int32_t)(nnames - 1);
		}
		f->bin = i == 1 ? 0 : i == 0 ? 1 : 3;
		f->src = -1;
		f->addr = align_addr(p->bins[f->bin].base + 0x3d4c + i * 0x100, 0);
	}

	/* chains: roots first, then children of earlier chains */
	uint32_t nroots = 3;
	p->nchains = 8 + nstacks / 3;
	p->chains = xcalloc(p->nchains, sizeof *p->chains);
	for (uint32_t c = 0; c < p->nchains; c++) {
		chain_t *ch = &p->chains[c];
		if (c < nroots) {
			ch->parent = -1;
			ch->nfr = c == 0 ? 2 : 2 + rn(2);
			ch->fr = xmalloc(ch->nfr * sizeof *ch->fr);
			ch->fr[0] = c == 0 ? 0 : 2; /* start / thread_start */
			ch->fr[1] = c == 0 ? 1 : 3; /* main / _pthread_start */
			if (ch->nfr > 2)
				ch->fr[2] = 4 + rn(p->ncaller - 4);
			ch->depth = ch->nfr;
			continue;
		}
		/* parent: an earlier chain with room left (stacks stay within 40 frames) */
		int32_t par;
		int tries = 0;
		do
			par = (int32_t)(c - 1 - skewed(c));
		while (p->chains[par].depth > 30 && ++tries < 20);
		if (p->chains[par].depth > 30)
			par = (int32_t)rn(nroots);
		uint32_t room = 35 - p->chains[par].depth;
		uint32_t n = 1 + rn(room < 6 ? room : 6);
		if (chance(30) && room > 12)
			n = 6 + rn(room - 6); /* occasionally a deep run (long recursion, 30-40 frame stacks) */
		ch->parent = par;
		ch->fr = new_frames(p, n, &ch->nfr, 0);
		ch->depth = p->chains[par].depth + ch->nfr;
	}
	p->nleaves = 40 + nstacks / 2;
	p->leaves = xcalloc(p->nleaves, sizeof *p->leaves);
	for (uint32_t l = 0; l < p->nleaves; l++)
		p->leaves[l].fr = new_frames(p, rn(3), &p->leaves[l].nfr, 1);

	/* stacks: distinct (chain, leaf) pairs */
	p->nstacks = nstacks;
	p->stacks = xcalloc(nstacks, sizeof *p->stacks);
	uint32_t hcap = 1;
	while (hcap < nstacks * 2)
		hcap <<= 1;
	uint64_t *seen = xcalloc(hcap, sizeof *seen);
	for (uint32_t s = 0; s < nstacks; s++) {
		for (int tries = 0;; tries++) {
			int32_t ch = (int32_t)(p->nchains - 1 - skewed(p->nchains));
			uint32_t lf = rn(p->nleaves);
			/* a few single-frame stacks (leaf alone), never in text-addresses form where the
			 * root-side fragment carries the trailing 0 */
			if (opt.enc != ENC_TEXT && chance(15))
				ch = -1, lf = rn(p->nleaves);
			if (ch >= 0 && p->chains[ch].depth + p->leaves[lf].nfr > 40)
				continue;
			if (ch < 0 && p->leaves[lf].nfr != 1) {
				if (tries < 1000)
					continue;
				ch = 0;
			}
			uint64_t key = ((uint64_t)(uint32_t)(ch + 1) << 32 | lf) + 1;
			uint32_t h = (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 40) & (hcap - 1);
			while (seen[h] && seen[h] != key)
				h = (h + 1) & (hcap - 1);
			if (seen[h] && tries < 1000)
				continue;
			seen[h] = key;
			p->stacks[s].chain = ch;
			p->stacks[s].leaf = lf;
			p->stacks[s].depth = (ch >= 0 ? p->chains[ch].depth : 0) + p->leaves[lf].nfr;
			break;
		}
	}
	free(seen);

	p->bin_id = xcalloc(p->nbins, sizeof(uint64_t));
	p->path_id = xcalloc(p->npaths ? p->npaths : 1, sizeof(uint64_t));
	p->frame_id = xcalloc(p->ncaller + p->nleaf, sizeof(uint64_t));
	p->chain_frag_id = xcalloc(p->nchains, sizeof(uint64_t));
	p->leaf_frag_id = xcalloc(p->nleaves, sizeof(uint64_t));
	p->bt_id = xcalloc(nstacks, sizeof(uint64_t));
	p->tbt_id = xcalloc(nstacks, sizeof(uint64_t));
	p->bt_fmt = xcalloc(nstacks, sizeof(char *));
}

/* Leaf-first frame list of a stack (text-addresses: values, trailing 0 not included). */
static uint32_t stack_frames_root_first(const process_t *p, const stack_t_ *s, uint32_t *out_fr)
{
	uint32_t n = 0;
	/* walk chains from this one up to the root, then reverse piecewise */
	int32_t chain_path[64];
	uint32_t np = 0;
	for (int32_t c = s->chain; c >= 0; c = p->chains[c].parent)
		chain_path[np++] = c;
	while (np--) {
		const chain_t *ch = &p->chains[chain_path[np]];
		memcpy(out_fr + n, ch->fr, ch->nfr * sizeof *out_fr);
		n += ch->nfr;
	}
	const leafpiece_t *lp = &p->leaves[s->leaf];
	memcpy(out_fr + n, lp->fr, lp->nfr * sizeof *out_fr);
	return n + lp->nfr;
}

/* ------------------------------------------------------------------ document pieces */

static const char *schema_name(void)
{
	return opt.schema == SCH_TIME ? "time-profile" : opt.schema == SCH_CPU ? "cpu-profile" : "counters-profile";
}

static void write_header(void)
{
	int modern = opt.enc >= ENC_TAGGED;
	PUTS("<?xml version=\"1.0\"?>\n<trace-query-result>\n<node xpath='//trace-toc[1]/run[1]/data[1]/table[");
	putu(2 + rn(30));
	PUTS("]'><schema name=\"");
	puts_(schema_name());
	PUTS("\"");
	if (modern) {
		if (opt.schema == SCH_COUNTERS)
			PUTS(" documentation=\"Represents counters profiling.\"");
		else {
			PUTS(" documentation=\"When combined with other ");
			puts_(schema_name());
			PUTS(" samples, creates a statistical picture of where your application is spending its "
			     "time.\"");
		}
	}
	PUTS(">");
#define COL(m, n, e)                                                                                                   \
	PUTS("<col><mnemonic>" m "</mnemonic><name>" n "</name><engineering-type>" e "</engineering-type></col>")
	COL("time", "Sample Time", "sample-time");
	COL("thread", "Thread", "thread");
	COL("process", "Process", "process");
	COL("core", "Core", "core");
	COL("thread-state", "State", "thread-state");
	if (opt.schema == SCH_COUNTERS) {
		if (modern)
			COL("stack", "Backtrace", "tagged-backtrace");
		else
			COL("stack", "Backtrace", "backtrace");
		COL("weight", "Weight", "any");
		COL("counters-array", "Counter Value Array", "pmc-events");
	} else {
		if (opt.schema == SCH_CPU)
			COL("weight", "Cycles", "cycle-weight");
		else
			COL("weight", "Weight", "weight");
		if (modern)
			COL("stack", "Backtrace", "tagged-backtrace");
		else
			COL("stack", "Backtrace", "backtrace");
	}
#undef COL
	PUTS("</schema>");
}

/* shared ids */
static uint64_t id_state, id_devsess, id_tag0, id_pmc_zero;
static uint64_t id_core[16];
#define NWEIGHTS 64
static struct {
	uint64_t v;
	char fmt[24];
	uint64_t id;
} weights[NWEIGHTS];
static uint32_t nweights;

static void fmt_scaled(char *buf, size_t n, double v, const char *const units[3], double base)
{
	if (v >= base * base)
		snprintf(buf, n, "%.2f %s", v / (base * base), units[2]);
	else if (v >= base)
		snprintf(buf, n, "%.2f %s", v / base, units[1]);
	else
		snprintf(buf, n, "%.2f %s", v, units[0]);
}

static void build_weights(void)
{
	static const char *const ns_units[] = {"ns", "µs", "ms"};
	static const char *const k26[] = {"", "k", "M"}, *const kc14[] = {"c", "Kc", "Mc"};
	nweights = NWEIGHTS;
	for (uint32_t i = 0; i < nweights; i++) {
		uint64_t v;
		if (opt.schema == SCH_TIME) {
			/* index 0 is the 1 ms sampler tick; others are the odd ones seen in real files */
			static const uint64_t odd[] = {1127125, 998375,  2000000, 1013541,
			                               999958,  1500000, 873250,  3001208};
			v = i == 0 ? 1000000 : i <= 8 ? odd[i - 1] : 900000 + rn(250000);
			fmt_scaled(weights[i].fmt, sizeof weights[i].fmt, (double)v, ns_units, 1000);
		} else if (opt.schema == SCH_CPU) {
			v = i == 0 ? 1000075 : 300000 + rn(900000);
			fmt_scaled(weights[i].fmt, sizeof weights[i].fmt, (double)v, opt.enc >= ENC_TAGGED ? k26 : kc14,
			           1000);
			if (v < 1000)
				snprintf(weights[i].fmt, sizeof weights[i].fmt, "%" PRIu64, v);
		} else {
			v = i == 0 ? 1000000 : 990000 + rn(20000);
			fmt_scaled(weights[i].fmt, sizeof weights[i].fmt, (double)v, k26, 1000);
		}
		weights[i].v = v;
	}
}

static uint32_t pick_weight(void)
{
	/* time-profile: mostly the 1 ms tick; cpu-profile: cycles vary a lot */
	if (opt.schema == SCH_CPU)
		return chance(300) ? 0 : 1 + rn(nweights - 1);
	return chance(950) ? 0 : 1 + rn(nweights - 1);
}

static void write_process(process_t *p)
{
	if (p->id) {
		put_ref("process", p->id);
		return;
	}
	p->id = next_id++;
	PUTS("<process id=\"");
	putu(p->id);
	PUTS("\" fmt=\"");
	puts_(p->name_xml);
	PUTS(" (");
	putu((uint64_t)p->pid);
	PUTS(")\"><pid id=\"");
	putu(next_id++);
	PUTS("\" fmt=\"");
	putu((uint64_t)p->pid);
	PUTS("\">");
	putu((uint64_t)p->pid);
	PUTS("</pid>");
	if (id_devsess) {
		put_ref("device-session", id_devsess);
	} else {
		id_devsess = next_id++;
		PUTS("<device-session id=\"");
		putu(id_devsess);
		PUTS("\" fmt=\"TODO\">TODO</device-session>");
	}
	PUTS("</process>");
}

static void write_thread(thread_t *t)
{
	if (t->id) {
		put_ref("thread", t->id);
		return;
	}
	t->id = next_id++;
	PUTS("<thread id=\"");
	putu(t->id);
	PUTS("\" fmt=\"");
	puts_(t->fmt_xml);
	PUTS("\"><tid id=\"");
	t->tid_id = next_id++;
	putu(t->tid_id);
	PUTS("\" fmt=\"");
	putx(t->tid);
	PUTS("\">");
	putu(t->tid);
	PUTS("</tid>");
	write_process(&procs[t->proc]);
	PUTS("</thread>");
}

static void write_frame(process_t *p, uint32_t fi)
{
	if (p->frame_id[fi]) {
		put_ref("frame", p->frame_id[fi]);
		return;
	}
	frame_t *f = &p->frames[fi];
	p->frame_id[fi] = next_id++;
	PUTS("<frame id=\"");
	putu(p->frame_id[fi]);
	PUTS("\" name=\"");
	if (f->sym >= 0)
		puts_(names[f->sym].xml);
	else
		putx(f->hexname);
	PUTS("\" addr=\"");
	putx(f->addr);
	PUTS("\"");
	if (f->bin < 0 && f->src < 0) {
		PUTS("/>");
		return;
	}
	PUTS(">");
	if (f->bin >= 0) {
		if (p->bin_id[f->bin]) {
			put_ref("binary", p->bin_id[f->bin]);
		} else {
			p->bin_id[f->bin] = next_id++;
			PUTS("<binary id=\"");
			putu(p->bin_id[f->bin]);
			PUTS("\" ");
			puts_(p->bins[f->bin].xml_def);
			PUTS("/>");
		}
	}
	if (f->src >= 0) {
		PUTS("<source line=\"");
		putu(f->line);
		PUTS("\">");
		if (p->path_id[f->src]) {
			put_ref("path", p->path_id[f->src]);
		} else {
			p->path_id[f->src] = next_id++;
			PUTS("<path id=\"");
			putu(p->path_id[f->src]);
			PUTS("\">");
			puts_(p->paths_xml[f->src]);
			PUTS("</path>");
		}
		PUTS("</source>");
	}
	PUTS("</frame>");
}

static uint32_t scratch_fr[128];

/* frames of stack s written leaf first */
static void write_frames_leaf_first(process_t *p, const stack_t_ *s)
{
	uint32_t n = stack_frames_root_first(p, s, scratch_fr);
	while (n--)
		write_frame(p, scratch_fr[n]);
}

static char *make_bt_fmt(process_t *p, const stack_t_ *s, uint32_t total_values)
{
	uint32_t n = stack_frames_root_first(p, s, scratch_fr);
	const frame_t *leaf = &p->frames[scratch_fr[n - 1]];
	char hex[24];
	const char *lname;
	if (leaf->sym >= 0)
		lname = names[leaf->sym].xml;
	else {
		/* the tagged fmt shows the real PC: addr - 1 in the 14.3+ forms */
		snprintf(hex, sizeof hex, "0x%" PRIx64, opt.enc == ENC_TEXT ? leaf->addr : leaf->addr - 1);
		lname = hex;
	}
	return xasprintf("%s ← (%u other frames)", lname, total_values - 1);
}

static void write_fragment(process_t *p, uint64_t *idp, const uint32_t *fr, uint32_t nfr, int trailing_zero)
{
	write_process(p); /* always a ref here: the thread defined it */
	if (*idp) {
		put_ref("text-addresses", *idp);
		return;
	}
	*idp = next_id++;
	PUTS("<text-addresses id=\"");
	putu(*idp);
	PUTS("\" fmt=\"frag ");
	putu(1000 + (*idp % 3000));
	PUTS("\">");
	for (uint32_t i = nfr; i--;) { /* leaf first */
		putu(p->frames[fr[i]].addr);
		if (i || trailing_zero)
			PUTS(" ");
	}
	if (trailing_zero)
		PUTS("0");
	PUTS("</text-addresses>");
}

static void write_stack(process_t *p, uint32_t si)
{
	stack_t_ *s = &p->stacks[si];
	if (opt.enc == ENC_TEXT) {
		if (p->bt_id[si]) {
			put_ref("backtrace", p->bt_id[si]);
			return;
		}
		p->bt_id[si] = next_id++;
		PUTS("<backtrace id=\"");
		putu(p->bt_id[si]);
		PUTS("\" fmt=\"");
		char *fmt = make_bt_fmt(p, s, s->depth + 1);
		puts_(fmt);
		free(fmt);
		PUTS("\">");
		const leafpiece_t *lp = &p->leaves[s->leaf];
		write_fragment(p, &p->leaf_frag_id[s->leaf], lp->fr, lp->nfr, s->chain < 0);
		for (int32_t c = s->chain; c >= 0; c = p->chains[c].parent)
			write_fragment(p, &p->chain_frag_id[c], p->chains[c].fr, p->chains[c].nfr,
			               p->chains[c].parent < 0);
		PUTS("</backtrace>");
		return;
	}
	if (opt.enc == ENC_BT) {
		if (p->bt_id[si]) {
			put_ref("backtrace", p->bt_id[si]);
			return;
		}
		p->bt_id[si] = next_id++;
		PUTS("<backtrace id=\"");
		putu(p->bt_id[si]);
		PUTS("\">");
		write_frames_leaf_first(p, s);
		PUTS("</backtrace>");
		return;
	}
	if (p->tbt_id[si]) {
		put_ref("tagged-backtrace", p->tbt_id[si]);
		return;
	}
	p->tbt_id[si] = next_id++;
	PUTS("<tagged-backtrace id=\"");
	putu(p->tbt_id[si]);
	PUTS("\" fmt=\"");
	char *fmt = make_bt_fmt(p, s, s->depth);
	puts_(fmt);
	free(fmt);
	PUTS("\">");
	if (opt.enc == ENC_TAGGED) {
		p->bt_id[si] = next_id++;
		PUTS("<backtrace id=\"");
		putu(p->bt_id[si]);
		PUTS("\">");
		write_frames_leaf_first(p, s);
		PUTS("</backtrace>");
		if (id_tag0) {
			put_ref("uint64", id_tag0);
		} else {
			id_tag0 = next_id++;
			PUTS("<uint64 id=\"");
			putu(id_tag0);
			PUTS("\" fmt=\"0\">0</uint64>");
		}
	} else {
		write_frames_leaf_first(p, s);
	}
	PUTS("</tagged-backtrace>");
}

/* ------------------------------------------------------------------ truth */

typedef struct {
	uint64_t key; /* thread << 32 | (stack + 1), stack 0 = sentinel; 0 = empty slot */
	uint64_t w, n;
} cell_t;
static cell_t *cells;
static size_t ncells, cells_cap;

static void cell_add(uint32_t thread, uint32_t stack_plus1, uint64_t w)
{
	if ((ncells + 1) * 2 > cells_cap) {
		size_t ncap = cells_cap ? cells_cap * 2 : 4096;
		cell_t *nc = xcalloc(ncap, sizeof *nc);
		for (size_t i = 0; i < cells_cap; i++) {
			if (!cells[i].key)
				continue;
			size_t h = (size_t)((cells[i].key * 0x9e3779b97f4a7c15ull) >> 20) & (ncap - 1);
			while (nc[h].key)
				h = (h + 1) & (ncap - 1);
			nc[h] = cells[i];
		}
		free(cells);
		cells = nc, cells_cap = ncap;
	}
	uint64_t key = ((uint64_t)thread << 32 | stack_plus1) + 1;
	size_t h = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 20) & (cells_cap - 1);
	while (cells[h].key && cells[h].key != key)
		h = (h + 1) & (cells_cap - 1);
	if (!cells[h].key)
		cells[h].key = key, ncells++;
	cells[h].w += w;
	cells[h].n++;
}

typedef struct {
	char *s;
	uint64_t w;
} line_t;

static int cmp_line_key(const void *a, const void *b)
{
	return strcmp(((const line_t *)a)->s, ((const line_t *)b)->s);
}
static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmp_thread_pid_tid(const void *a, const void *b)
{
	const thread_t *x = &threads[*(const uint32_t *)a], *y = &threads[*(const uint32_t *)b];
	int64_t px = procs[x->proc].pid, py = procs[y->proc].pid;
	if (px != py)
		return px < py ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static void write_truth(void)
{
	line_t *lines = xmalloc((ncells ? ncells : 1) * sizeof *lines);
	size_t nl = 0;
	size_t bcap = 1 << 16;
	char *b = xmalloc(bcap);
	for (size_t i = 0; i < cells_cap; i++) {
		if (!cells[i].key)
			continue;
		uint64_t key = cells[i].key - 1;
		uint32_t ti = (uint32_t)(key >> 32), sp1 = (uint32_t)key;
		const thread_t *t = &threads[ti];
		const process_t *p = &procs[t->proc];
		size_t len = (size_t)snprintf(b, bcap, "%s tid=%" PRIu64, t->name_raw, t->tid);
		if (sp1) {
			uint32_t n = stack_frames_root_first(p, &p->stacks[sp1 - 1], scratch_fr);
			for (uint32_t k = 0; k < n; k++) {
				const frame_t *f = &p->frames[scratch_fr[k]];
				if (len + 512 > bcap)
					b = xrealloc(b, bcap *= 2);
				if (f->sym >= 0 && opt.enc != ENC_TEXT)
					len += (size_t)snprintf(b + len, bcap - len, ";%s", names[f->sym].raw);
				else if (f->bin < 0 && opt.enc != ENC_TEXT) /* the exported hex name, as Instruments */
					len += (size_t)snprintf(b + len, bcap - len, ";0x%" PRIx64, f->hexname);
				else
					len += (size_t)snprintf(b + len, bcap - len, ";0x%" PRIx64, f->addr);
			}
		}
		lines[nl].s = memcpy(xmalloc(len + 1), b, len + 1);
		lines[nl++].w = cells[i].w;
	}
	free(b);
	/* identical text (same thread, frames with equal labels) is one folded line */
	qsort(lines, nl, sizeof *lines, cmp_line_key);
	char **outl = xmalloc((nl ? nl : 1) * sizeof *outl);
	size_t no = 0;
	for (size_t i = 0; i < nl;) {
		uint64_t w = 0;
		size_t j = i;
		for (; j < nl && !strcmp(lines[j].s, lines[i].s); j++)
			w += lines[j].w;
		outl[no++] = xasprintf("%s %" PRIu64, lines[i].s, w);
		for (size_t k = i; k < j; k++)
			free(lines[k].s);
		i = j;
	}
	free(lines);
	qsort(outl, no, sizeof *outl, cmp_str); /* the order of `LC_ALL=C sort` on whole lines */
	FILE *f = fopen(opt.truth, "w");
	if (!f)
		die("%s: %s", opt.truth, strerror(errno));
	for (size_t i = 0; i < no; i++) {
		fputs(outl[i], f);
		fputc('\n', f);
		free(outl[i]);
	}
	free(outl);
	if (fclose(f))
		die("%s: write failed", opt.truth);

	char *tpath = opt.truth_threads ? xstrdup(opt.truth_threads) : xasprintf("%s.threads", opt.truth);
	f = fopen(tpath, "w");
	if (!f)
		die("%s: %s", tpath, strerror(errno));
	uint32_t *order = xmalloc(opt.threads * sizeof *order);
	for (uint32_t i = 0; i < opt.threads; i++)
		order[i] = i;
	qsort(order, opt.threads, sizeof *order, cmp_thread_pid_tid);
	for (uint32_t i = 0; i < opt.threads; i++) {
		const thread_t *t = &threads[order[i]];
		if (!t->samples)
			continue;
		fprintf(f, "%" PRId64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%s\n", procs[t->proc].pid, t->tid,
		        t->weight, t->samples, t->name_raw);
	}
	free(order);
	if (fclose(f))
		die("%s: write failed", tpath);
	free(tpath);
}

/* ------------------------------------------------------------------ main */

static void build_threads(void)
{
	threads = xcalloc(opt.threads, sizeof *threads);
	uint32_t user_procs = opt.processes - (opt.processes > 1);
	for (uint32_t i = 0; i < opt.threads; i++) {
		thread_t *t = &threads[i];
		/* every process gets at least one thread; the kernel gets about one in eight */
		if (i < opt.processes)
			t->proc = i;
		else if (opt.processes > 1 && chance(125))
			t->proc = 0;
		else
			t->proc = (opt.processes > 1) + rn(user_procs);
		process_t *p = &procs[t->proc];
		t->tid = 0x400 + (uint64_t)i * 0x3b + rn(0x3a) + (p->is_kernel ? 0 : 0x13e0000);
		int first_of_proc = i < opt.processes;
		if (p->is_kernel)
			t->name_raw = xasprintf("idle #%u", i % 10);
		else if (first_of_proc)
			t->name_raw = xstrdup(chance(500) ? "Main Thread" : "main");
		else
			t->name_raw = xstrdup(THREAD_NAMES[rn(sizeof THREAD_NAMES / sizeof *THREAD_NAMES)]);
		char *fmt;
		if (opt.enc >= ENC_TAGGED)
			fmt = xasprintf("%s (0x%" PRIx64 ") (%s, pid: %" PRId64 ")", t->name_raw, t->tid, p->name_raw,
			                p->pid);
		else if (opt.enc == ENC_BT && opt.xcode26_0)
			fmt = xasprintf("%s 0x%" PRIx64 " (%s, pid: %" PRId64 ")", t->name_raw, t->tid, p->name_raw,
			                p->pid);
		else
			fmt = xasprintf("%s  0x%" PRIx64 " (%s, pid: %" PRId64 ")", t->name_raw, t->tid, p->name_raw,
			                p->pid);
		t->fmt_xml = xml_escape(fmt);
		free(fmt);
		t->hot = 1 + rn(4);
		t->ws_len = opt.per_thread < p->nstacks ? opt.per_thread : p->nstacks;
		t->ws_start = rn(p->nstacks);
	}
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define NEEDV()                                                                                                        \
	do {                                                                                                           \
		if (!v)                                                                                                \
			die("%s needs a value", a);                                                                    \
		i++;                                                                                                   \
	} while (0)
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(a, "--encoding")) {
			NEEDV();
			if (!strcmp(v, "text-addresses"))
				opt.enc = ENC_TEXT;
			else if (!strcmp(v, "backtrace"))
				opt.enc = ENC_BT;
			else if (!strcmp(v, "tagged"))
				opt.enc = ENC_TAGGED;
			else if (!strcmp(v, "tagged27"))
				opt.enc = ENC_TAGGED27;
			else
				die("--encoding: unknown '%s' (text-addresses, backtrace, tagged, tagged27)", v);
		} else if (!strcmp(a, "--schema")) {
			NEEDV();
			if (!strcmp(v, "time-profile"))
				opt.schema = SCH_TIME;
			else if (!strcmp(v, "cpu-profile"))
				opt.schema = SCH_CPU;
			else if (!strcmp(v, "counters-profile"))
				opt.schema = SCH_COUNTERS;
			else
				die("--schema: unknown '%s' (time-profile, cpu-profile, counters-profile)", v);
		} else if (!strcmp(a, "--size")) {
			NEEDV();
			opt.size = parse_size(v);
		} else if (!strcmp(a, "--rows")) {
			NEEDV();
			opt.rows = parse_u("rows", v, 1, UINT64_MAX);
		} else if (!strcmp(a, "--threads")) {
			NEEDV();
			opt.threads = (uint32_t)parse_u("threads", v, 1, 100000);
		} else if (!strcmp(a, "--processes")) {
			NEEDV();
			opt.processes = (uint32_t)parse_u("processes", v, 1, 10000);
		} else if (!strcmp(a, "--distinct-stacks")) {
			NEEDV();
			opt.stacks = (uint32_t)parse_u("distinct-stacks", v, 1, 10000000);
		} else if (!strcmp(a, "--stacks-per-thread")) {
			NEEDV();
			opt.per_thread = (uint32_t)parse_u("stacks-per-thread", v, 1, 10000000);
		} else if (!strcmp(a, "--seed")) {
			NEEDV();
			opt.seed = parse_u("seed", v, 0, UINT64_MAX);
		} else if (!strcmp(a, "--gzip")) {
			opt.gzip = 1;
		} else if (!strcmp(a, "--xcode26.0")) {
			opt.xcode26_0 = 1;
		} else if (!strcmp(a, "--truth")) {
			NEEDV();
			opt.truth = v;
		} else if (!strcmp(a, "--truth-threads")) {
			NEEDV();
			opt.truth_threads = v;
		} else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
			NEEDV();
			opt.out = v;
		} else {
			usage(stderr);
			die("unknown argument '%s'", a);
		}
#undef NEEDV
	}
	if (!opt.size && !opt.rows)
		opt.size = 10000000;
	if (opt.threads < opt.processes)
		die("--threads (%u) must be at least --processes (%u): every process has a thread", opt.threads,
		    opt.processes);
	if (opt.xcode26_0 < 0)
		opt.xcode26_0 = (int)(opt.seed & 1);

	rng_seed(opt.seed);
	for (uint32_t i = 0; i < NSYSLIBS; i++) {
		syslibs[i].uuid = uuid_str();
		syslibs[i].base = 0x180000000ull + ((uint64_t)i << 26) + ((uint64_t)rn(0x100) << 14);
	}
	build_names();
	build_weights();
	procs = xcalloc(opt.processes, sizeof *procs);
	uint32_t user_procs = opt.processes - (opt.processes > 1);
	for (uint32_t i = 0; i < opt.processes; i++) {
		/* distinct stacks are split over the user processes; the kernel has a few */
		uint32_t n = procs && opt.processes > 1 && i == 0 ? 8 : opt.stacks / (user_procs ? user_procs : 1);
		build_process(&procs[i], i, n ? n : 1);
	}
	build_threads();
	/* cumulative thread-sampling table */
	uint64_t *cum = xmalloc(opt.threads * sizeof *cum), tot = 0;
	for (uint32_t i = 0; i < opt.threads; i++)
		cum[i] = tot += threads[i].hot;

	out.cap = 1 << 20;
	out.buf = xmalloc(out.cap);
	out.path = opt.out;
	if (opt.gzip) {
		out.gz = strcmp(opt.out, "-") ? gzopen(opt.out, "wb1") : gzdopen(1, "wb1");
		if (!out.gz)
			die("%s: cannot open for gzip output", opt.out);
		gzbuffer(out.gz, 1 << 20);
	} else {
		out.f = strcmp(opt.out, "-") ? fopen(opt.out, "wb") : stdout;
		if (!out.f)
			die("%s: %s", opt.out, strerror(errno));
	}

	write_header();
	uint64_t t_ns = 40000000 + rn(600000000);
	uint64_t pmc_a = 0, pmc_b = 0;
	uint64_t row = 0;
	while (opt.rows ? row < opt.rows : bytes_written() < opt.size) {
		if (row)
			PUTS("\n");
		row++;
		/* pick a thread, weighted */
		uint64_t r = rnd() % tot;
		uint32_t lo = 0, hi = opt.threads - 1;
		while (lo < hi) {
			uint32_t mid = (lo + hi) / 2;
			if (cum[mid] > r)
				hi = mid;
			else
				lo = mid + 1;
		}
		uint32_t ti = lo;
		thread_t *t = &threads[ti];
		process_t *p = &procs[t->proc];
		t_ns += 1 + rn(2000000 / opt.threads + 1000);

		PUTS("<row><sample-time id=\"");
		putu(next_id++);
		PUTS("\" fmt=\"");
		{
			uint64_t us = t_ns / 1000;
			char tb[32], *q = tb;
			uint64_t mm = us / 60000000, ss = us / 1000000 % 60, ms = us / 1000 % 1000, u = us % 1000;
			*q++ = (char)('0' + mm / 10 % 10), *q++ = (char)('0' + mm % 10), *q++ = ':';
			*q++ = (char)('0' + ss / 10), *q++ = (char)('0' + ss % 10), *q++ = '.';
			*q++ = (char)('0' + ms / 100), *q++ = (char)('0' + ms / 10 % 10), *q++ = (char)('0' + ms % 10);
			*q++ = '.';
			*q++ = (char)('0' + u / 100), *q++ = (char)('0' + u / 10 % 10), *q++ = (char)('0' + u % 10);
			put(tb, (size_t)(q - tb));
		}
		PUTS("\">");
		putu(t_ns);
		PUTS("</sample-time>");
		write_thread(t);
		write_process(p);
		uint32_t core = p->is_kernel ? rn(10) : rn(1000) < 700 ? 4 + rn(6) : rn(4);
		if (id_core[core]) {
			put_ref("core", id_core[core]);
		} else {
			id_core[core] = next_id++;
			PUTS("<core id=\"");
			putu(id_core[core]);
			PUTS("\" fmt=\"CPU ");
			putu(core);
			if (opt.enc == ENC_TEXT)
				puts_(core >= 4 ? " (Performance)\">" : " (Efficiency)\">");
			else
				puts_(core >= 4 ? " (P Core)\">" : " (E Core)\">");
			putu(core);
			PUTS("</core>");
		}
		if (id_state) {
			put_ref("thread-state", id_state);
		} else {
			id_state = next_id++;
			PUTS("<thread-state id=\"");
			putu(id_state);
			PUTS("\" fmt=\"Running\">Running</thread-state>");
		}

		/* stack: kernel idle threads mostly have none; others ~1% sentinel */
		int sentinel = p->is_kernel ? chance(800) : chance(10);
		/* Each thread samples a working set of its process's stacks: a few hot ones (skewed)
		 * and a uniform tail. The set of distinct (thread, stack) pairs is then reached early
		 * (≈20 MB with the defaults), so a bigger file has the same distinct content, only more
		 * rows: what "memory must not grow with the file size" is about. */
		uint32_t k = chance(600) ? skewed(t->ws_len) : rn(t->ws_len);
		uint32_t si = sentinel ? 0 : (t->ws_start + k) % p->nstacks;
		uint32_t wi = pick_weight();
		const char *wtag = opt.schema == SCH_TIME  ? "weight"
		                   : opt.schema == SCH_CPU ? "cycle-weight"
		                                           : "pmc-event";
		if (opt.schema == SCH_COUNTERS) {
			if (sentinel)
				PUTS("<sentinel/>");
			else
				write_stack(p, si);
		}
		if (weights[wi].id) {
			PUTS("<");
			puts_(wtag);
			PUTS(" ref=\"");
			putu(weights[wi].id);
			PUTS("\"/>");
		} else {
			weights[wi].id = next_id++;
			PUTS("<");
			puts_(wtag);
			PUTS(" id=\"");
			putu(weights[wi].id);
			PUTS("\" fmt=\"");
			puts_(weights[wi].fmt);
			PUTS("\">");
			putu(weights[wi].v);
			PUTS("</");
			puts_(wtag);
			PUTS(">");
		}
		if (opt.schema != SCH_COUNTERS) {
			if (sentinel)
				PUTS("<sentinel/>");
			else
				write_stack(p, si);
		} else {
			/* counters-array: two cumulative-ish PMC counts, unique per row except idle zeros */
			if (p->is_kernel && sentinel) {
				if (id_pmc_zero) {
					put_ref("pmc-events", id_pmc_zero);
				} else {
					id_pmc_zero = next_id++;
					PUTS("<pmc-events id=\"");
					putu(id_pmc_zero);
					PUTS("\" fmt=\"(0), (0)\">0 0</pmc-events>");
				}
			} else {
				pmc_a = 500000 + rn(600000), pmc_b += 1 + rn(4000000);
				char fb[64];
				int n = snprintf(fb, sizeof fb, "(%" PRIu64 ",%03" PRIu64 "), (", pmc_a / 1000,
				                 pmc_a % 1000);
				uint64_t v = pmc_b;
				/* thousands separators like Instruments: 2,927,687 */
				char grp[32];
				int gn = 0;
				do {
					if (gn && gn % 4 == 3)
						grp[gn++] = ',';
					grp[gn++] = (char)('0' + v % 10);
				} while (v /= 10);
				while (gn)
					fb[n++] = grp[--gn];
				fb[n++] = ')';
				PUTS("<pmc-events id=\"");
				putu(next_id++);
				PUTS("\" fmt=\"");
				put(fb, (size_t)n);
				PUTS("\">");
				putu(pmc_a);
				PUTS(" ");
				putu(pmc_b);
				PUTS("</pmc-events>");
			}
		}
		PUTS("</row>");

		if (opt.truth)
			cell_add(ti, sentinel ? 0 : si + 1, weights[wi].v);
		t->weight += weights[wi].v;
		t->samples++;
	}
	if (row)
		PUTS("\n");
	PUTS("</node></trace-query-result>\n");
	out_flush();
	if (out.gz) {
		if (gzclose(out.gz) != Z_OK)
			die("%s: gzip close failed", opt.out);
	} else if (out.f != stdout ? fclose(out.f) : fflush(out.f)) {
		die("%s: write failed: %s", opt.out, strerror(errno));
	}
	free(cum);
	if (opt.truth)
		write_truth();
	fprintf(stderr, "xcgen: %" PRIu64 " rows, %" PRIu64 " bytes, %" PRIu64 " ids\n", row, out.total, next_id - 1);
	return 0;
}
