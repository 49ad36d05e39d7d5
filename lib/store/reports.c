/* Reports from Records files and session directories: one per finished record, with its keys,
 * numbers, stack signature and content hash. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/internal.h"
#include "read/records.h" /* TEMP: until the store reads events */
#include "tracekit/symbol.h"
#include "util/mem.h"

const char *const tk_store_key_names[TK_STORE_NKEYS] = {"app", "version", "build", "device", "os", "session"};

int tk_store_key_index(const char *name)
{
	if (strcmp(name, "app.version") == 0)
		return TK_STORE_VERSION;
	for (int i = 0; i < TK_STORE_NKEYS; i++)
		if (strcmp(name, tk_store_key_names[i]) == 0)
			return i;
	return -1;
}

/* Strings of a report set live in one list of blocks, freed together. */
typedef struct block {
	struct block *next;
	char data[];
} block;

const char *tk_report_set_keep(tk_report_set *s, const char *str)
{
	size_t n = strlen(str);
	block *b = tk_xmalloc(sizeof *b + n + 1);
	memcpy(b->data, str, n + 1);
	b->next = s->arena;
	s->arena = b;
	return b->data;
}

void tk_report_set_free(tk_report_set *s)
{
	for (block *b = s->arena, *next; b; b = next) {
		next = b->next;
		free(b);
	}
	free(s->v);
	for (size_t i = 0; i < s->pn; i++)
		free(s->pv[i].fns);
	free(s->pv);
	memset(s, 0, sizeof *s);
}

int tk_report_meta_parse(tk_report_meta *meta, const char *spec, char **owned, tk_error *err)
{
	*owned = tk_xstrdup(spec);
	for (char *item = *owned, *next; item && *item; item = next) {
		next = strchr(item, ',');
		if (next)
			*next++ = 0;
		char *eq = strchr(item, '=');
		int k = eq ? (*eq = 0, tk_store_key_index(item)) : -1;
		if (k < 0) {
			tk_error_set(
			    err,
			    "--set: '%s' is not KEY=VALUE with KEY one of app, version, build, device, os, session",
			    item);
			free(*owned);
			*owned = NULL;
			return -1;
		}
		meta->keys[k] = eq + 1;
	}
	return 0;
}

/* ---- stack signatures ---- */

/* System code is not where a hang's cause is told apart: skip it in signatures. */
static int system_binary(const char *path)
{
	static const char *const prefix[] = {"/lib/",         "/lib64/",     "/usr/lib/",  "/usr/lib64/", "/System/",
	                                     "/usr/libexec/", "/Developer/", "linux-vdso", "[vdso]"};
	if (path[0] != '/' && path[0] != 'l' && path[0] != '[') /* what every prefix starts with */
		return 0;
	for (size_t i = 0; i < sizeof prefix / sizeof prefix[0]; i++)
		if (strncmp(path, prefix[i], strlen(prefix[i])) == 0)
			return 1;
	return 0;
}

/* Appends to a name of at most n - 1 bytes, cutting as snprintf(buf, n, …) would: frame names go
 * into signatures, so the bytes must stay what the snprintf of earlier versions made (5 calls a
 * report cost ~5 k instructions in vfprintf). */
typedef struct namebuf {
	char *buf;
	size_t len, n;
} namebuf;

static void nb_put(namebuf *b, const char *s, size_t len)
{
	if (b->len + len > b->n - 1)
		len = b->n - 1 - b->len;
	memcpy(b->buf + b->len, s, len);
	b->len += len;
}

static void nb_hex(namebuf *b, uint64_t v) /* as %llx: lowercase, no leading zeros */
{
	char d[16];
	int i = 16;
	do
		d[--i] = "0123456789abcdef"[v & 15];
	while (v >>= 4);
	nb_put(b, d + i, (size_t)(16 - i));
}

/* A frame as a signature sees it, from a profile or straight from a record's snapshot. */
typedef struct sigframe {
	const char *name;  /* its symbol, or NULL */
	const char *image; /* its binary's name (NULL: no binary) */
	const char *path;  /* and path */
	uint64_t load_addr, addr;
	int synthetic;
} sigframe;

/* A frame's name in a signature: the symbol, else image+offset (the same on every device, unlike
 * the slid address), else the raw address. Returns its length (at most n - 1). */
static size_t frame_name(const sigframe *f, char *buf, size_t n)
{
	namebuf nb = {buf, 0, n};
	if (f->name) {
		nb_put(&nb, f->name, strlen(f->name));
	} else if (f->image && f->addr >= f->load_addr) {
		nb_put(&nb, f->image, strlen(f->image));
		nb_put(&nb, "+0x", 3);
		nb_hex(&nb, f->addr - f->load_addr);
	} else {
		nb_put(&nb, "0x", 2);
		nb_hex(&nb, f->addr);
	}
	buf[nb.len] = 0;
	return nb.len;
}

/* The first TK_STORE_SIGNATURE_FRAMES app frames of a stack given leaf first, leaf first; all
 * frames when none is an app frame. */
static char *signature_build(const sigframe *fr, size_t depth)
{
	char *out = tk_xmalloc(2048);
	size_t len = 0;
	out[0] = 0;
	const char *seen = NULL; /* the last path asked about (frames of one image share it) */
	int seen_system = 0;
	for (int pass = 0; pass < 2 && len == 0; pass++) {
		int taken = 0;
		for (size_t i = 0; i < depth && taken < TK_STORE_SIGNATURE_FRAMES; i++) {
			const sigframe *f = &fr[i];
			if (f->synthetic)
				continue;
			if (pass == 0 && f->image && f->path != seen) {
				seen = f->path;
				seen_system = system_binary(f->path);
			}
			if (pass == 0 && f->image && seen_system)
				continue;
			char name[512];
			size_t nl = frame_name(f, name, sizeof name);
			if (len + nl + 2 >= 2048)
				break;
			if (len)
				out[len++] = ';';
			memcpy(out + len, name, nl + 1);
			len += nl;
			taken++;
		}
	}
	return out;
}

/* The signature of a profile's stack. */
static char *signature_of(const tk_profile *p, tk_stack_id stack)
{
	tk_frame_id fr[256];
	size_t depth = tk_stack_frames(p, stack, fr, 256);
	if (depth > 256)
		depth = 256;
	sigframe sf[256];
	for (size_t i = 0; i < depth; i++) { /* fr is root first */
		const tk_frame *f = tk_frame_get(p, fr[depth - 1 - i]);
		const tk_binary *b = tk_binary_get(p, f->binary);
		sf[i] = (sigframe){.name = f->name ? tk_string(p, f->name) : NULL,
		                   .image = b ? tk_string(p, b->name) : NULL,
		                   .path = b ? tk_string(p, b->path) : NULL,
		                   .load_addr = b ? b->load_addr : 0,
		                   .addr = f->addr,
		                   .synthetic = (f->flags & TK_FRAME_SYNTHETIC) != 0};
	}
	return signature_build(sf, depth);
}

/* The heaviest stack of thread t (ties: the first seen). */
static tk_stack_id heaviest(const tk_profile *p, tk_thread_id t)
{
	size_t n;
	const tk_stack_weight *w = tk_thread_stacks(p, t, &n);
	tk_stack_id best = 0;
	uint64_t bw = 0;
	for (size_t i = 0; i < n; i++)
		if (w[i].stack && (w[i].weight > bw || !best)) {
			best = w[i].stack;
			bw = w[i].weight;
		}
	return best;
}

/* What the signatures of one session's records share. */
typedef struct signer {
	tk_records *r;
	const tk_report_meta *given;
	tk_elf_namer *z; /* one cache of ELF files for the session's records */
	int dsyms;       /* the caller's namer (dSYMs) names this session's frames */
	/* The first record found no image the session lists usable on this machine (the usual case:
	 * reports from devices). Every record lists the same images and z remembers each verdict, so
	 * later records list none and skip the ELF pass: ~4 k instructions a report. Not when the
	 * caller's namer runs: the symbolicator reads a profile's listed images. */
	int no_elf;
} signer;

/* MTHawkeye frames carry their image's UUID: the caller's namer (dSYMs) can name them. Our own
 * sessions were named from their ELF files when read. */
static int name_frames(signer *S, tk_profile **p, tk_error *err)
{
	if (!S->no_elf) {
		const tk_profile *before = *p;
		if (tk_elf_name_listed(p, S->z, err) < 0) /* a Linux session's own images, files of this machine */
			return -1;
		if (*p == before && !S->dsyms) /* named, it would be a new profile */
			S->no_elf = 1;
	}
	return S->dsyms ? S->given->name_frames(S->given->name_frames_ctx, p, err) : 0;
}

/* The signature tk_records_load_threads and signature_of would give a snapshot whose frames
 * nothing names, read from the record without a profile (~60 % of a report's signature cost):
 * threads in order, each with its one stack; the first with frames signs. A profile would merge
 * threads of one tid, and signature_of reads at most 256 frames: those go the long way (-1). */
static int snapshot_signature(signer *S, size_t i, char **sig)
{
	uint64_t tid, fr[256];
	size_t nfr = 0;
	int n = tk_records_snapshot(S->r, i, 0, &tid, fr, 0, &nfr);
	if (n <= 0)
		return n < 0 ? -1 : 0;
	int first = -1;
	uint64_t tids[64];
	if (n > 64)
		return -1;
	for (int k = 0; k < n; k++) {
		nfr = 0;
		tk_records_snapshot(S->r, i, (size_t)k, &tids[k], fr, 0, &nfr);
		for (int j = 0; j < k; j++)
			if (tids[j] == tids[k])
				return -1;
		if (nfr && first < 0) {
			if (nfr > 256)
				return -1;
			first = k;
		}
	}
	if (first < 0)
		return 0;
	tk_records_snapshot(S->r, i, (size_t)first, &tid, fr, 256, &nfr);
	sigframe sf[256];
	const char *last = NULL, *lastname = NULL;
	for (size_t j = 0; j < nfr; j++) { /* leaf first, as recorded */
		uint64_t base = 0;
		const char *path = tk_records_image_at(S->r, i, fr[j], &base);
		if (path != last) { /* its binary's name, as the reader interns it */
			const char *slash = path ? strrchr(path, '/') : NULL;
			lastname = slash ? slash + 1 : path;
			last = path;
		}
		sf[j] = (sigframe){.image = path ? lastname : NULL, .path = path, .load_addr = base, .addr = fr[j]};
	}
	*sig = signature_build(sf, nfr);
	return 0;
}

/* A hang's signature comes from the blocked thread's stack when the hang was detected (the
 * snapshot's first thread); without a snapshot, from the heaviest path of its tree. */
static char *record_signature(signer *S, size_t i, const tk_record_info *ri, tk_error *err)
{
	char *sig = NULL;
	/* nothing names this session's frames: no profile needed (a snapshot without frames falls
	 * back to the tree as below) */
	if (S->no_elf && !S->dsyms && ri->kind == TK_RECORD_HANG && ri->nthreads &&
	    snapshot_signature(S, i, &sig) == 0 && (sig || !ri->has_tree))
		return sig ? sig : tk_xcalloc(1, 1);
	tk_profile *p = tk_profile_new();
	if (ri->kind == TK_RECORD_HANG && ri->nthreads) {
		int n = tk_records_load_threads(S->r, i, p, S->no_elf ? TK_RECORDS_NO_SYMBOLS : 0, err);
		if (n < 0 || name_frames(S, &p, err))
			goto out;
		for (size_t t = 0; t < tk_thread_count(p) && !sig; t++) {
			tk_stack_id s = heaviest(p, (tk_thread_id)t);
			if (s)
				sig = signature_of(p, s);
		}
	}
	if (!sig && ri->has_tree) {
		tk_profile_free(p);
		p = tk_profile_new();
		int64_t t = tk_records_load(S->r, i, p, S->no_elf ? TK_RECORDS_NO_SYMBOLS : 0, err);
		if (t < 0 || name_frames(S, &p, err))
			goto out;
		tk_stack_id s = heaviest(p, (tk_thread_id)t);
		if (s)
			sig = signature_of(p, s);
	}
	if (!sig)
		sig = tk_xcalloc(1, 1);
out:
	tk_profile_free(p);
	return sig;
}

/* ---- content hash ---- */

/* SHA-256 from OpenSSL (SHA-NI where the CPU has it). EVP_Digest(…, EVP_sha256(), …) looks the
 * algorithm up and makes a context on every call: ~7 k instructions a report on top of ~4 k of
 * hashing (callgrind). The algorithm is fetched once and each thread keeps its context. */
static EVP_MD *sha256_md;
static pthread_key_t sha256_key; /* the thread's EVP_MD_CTX, freed when the thread ends */
static int sha256_keyed;
static pthread_once_t sha256_once = PTHREAD_ONCE_INIT;
static void sha256_ctx_free(void *ctx)
{
	EVP_MD_CTX_free(ctx);
}
static void sha256_fetch(void)
{
	sha256_md = EVP_MD_fetch(NULL, "SHA256", NULL);
	sha256_keyed = pthread_key_create(&sha256_key, sha256_ctx_free) == 0;
}

static void sha256_hex(const void *data, size_t n, char *hex, int bytes)
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdn = 0;
	pthread_once(&sha256_once, sha256_fetch);
	EVP_MD_CTX *sha256_ctx = sha256_keyed ? pthread_getspecific(sha256_key) : NULL;
	if (!sha256_ctx && sha256_keyed && (sha256_ctx = EVP_MD_CTX_new()) &&
	    pthread_setspecific(sha256_key, sha256_ctx) != 0) {
		EVP_MD_CTX_free(sha256_ctx);
		sha256_ctx = NULL;
	}
	if (!sha256_md || !sha256_ctx || !EVP_DigestInit_ex2(sha256_ctx, sha256_md, NULL) ||
	    !EVP_DigestUpdate(sha256_ctx, data, n) || !EVP_DigestFinal_ex(sha256_ctx, md, &mdn))
		EVP_Digest(data, n, md, &mdn, EVP_sha256(), NULL); /* as before, if any of that failed */
	static const char digits[] = "0123456789abcdef";
	int i;
	for (i = 0; i < bytes && i < (int)mdn; i++) {
		hex[2 * i] = digits[md[i] >> 4];
		hex[2 * i + 1] = digits[md[i] & 15];
	}
	hex[2 * i] = 0;
}

/* printf("%.17g", v) for the doubles reports carry (1e-4 <= |v| < 1e17, zero), without printf
 * (~4.5 k instructions a number in glibc): v = m * 2^e exactly, so v * 10^(16 - X) is an exact
 * 128-bit integer over a power of two, rounded to nearest, ties to even (exact halves occur, e.g.
 * 0.500003814697265625), as glibc's exact conversion rounds in the default mode; X is the exponent
 * after rounding, as %g defines it. Any other value goes to snprintf. test_store_api compares the
 * two on 1.8 M doubles and every exact half of a sweep (3.2 M halves and 32 M random doubles more
 * once, by hand: no difference). out holds 32 bytes. */
int tk_store_fmt_g17(double v, char *out)
{
	uint64_t bits;
	memcpy(&bits, &v, sizeof bits);
	int bexp = (int)(bits >> 52 & 0x7ff);
	uint64_t m = bits & ((1ull << 52) - 1);
	char *o = out;
	if (bexp == 0 && m == 0) {
		if (bits >> 63)
			*o++ = '-';
		*o++ = '0';
		*o = 0;
		return (int)(o - out);
	}
	double a = fabs(v);
	if (bexp == 0 || bexp == 0x7ff || !(a >= 1e-4) || !(a < 1e17))
		return snprintf(out, 32, "%.17g", v);
	static const uint64_t p10[20] = {1ull,
	                                 10ull,
	                                 100ull,
	                                 1000ull,
	                                 10000ull,
	                                 100000ull,
	                                 1000000ull,
	                                 10000000ull,
	                                 100000000ull,
	                                 1000000000ull,
	                                 10000000000ull,
	                                 100000000000ull,
	                                 1000000000000ull,
	                                 10000000000000ull,
	                                 100000000000000ull,
	                                 1000000000000000ull,
	                                 10000000000000000ull,
	                                 100000000000000000ull,
	                                 1000000000000000000ull,
	                                 10000000000000000000ull};
	m |= 1ull << 52;
	int e = bexp - 1075; /* a = m * 2^e */
	int X = 0;           /* an estimate of the decimal exponent, corrected below */
	if (a >= 1)
		while (X < 16 && a >= (double)p10[X + 1])
			X++;
	else
		while (X > -4 && a < 1.0 / (double)p10[-X])
			X--;
	uint64_t q = 0;
	for (int tries = 0;; tries++) {
		if (X < -4 || X > 16 || tries > 3)
			return snprintf(out, 32, "%.17g", v);
		int k = 16 - X;                                                    /* 0 … 20 */
		unsigned __int128 n = (unsigned __int128)m * p10[k < 19 ? k : 19]; /* < 2^120 */
		if (k == 20)                                                       /* 10^20 does not fit 64 bits */
			n *= 10;
		if (e >= 0) {
			if (e > 12) /* a < 1e17 < 2^57 and m >= 2^52: never, kept for safety */
				return snprintf(out, 32, "%.17g", v);
			n <<= e;
			if (n >> 64)
				return snprintf(out, 32, "%.17g", v);
			q = (uint64_t)n;
		} else {
			int sh = -e; /* a >= 1e-4 and m < 2^53: sh <= 66 */
			if (sh > 120)
				return snprintf(out, 32, "%.17g", v);
			unsigned __int128 one = 1, rem = n & ((one << sh) - 1), half = one << (sh - 1);
			unsigned __int128 qq = n >> sh;
			if (rem > half || (rem == half && (qq & 1)))
				qq++;
			if (qq >> 64)
				return snprintf(out, 32, "%.17g", v);
			q = (uint64_t)qq;
		}
		if (q >= p10[17])
			X++;
		else if (q < p10[16])
			X--;
		else
			break;
	}
	char d[17];
	for (int i = 17; i-- > 0; q /= 10)
		d[i] = (char)('0' + q % 10);
	int last = 16; /* the last significant digit */
	while (last > 0 && d[last] == '0')
		last--;
	if (v < 0)
		*o++ = '-';
	if (X >= 0) {
		memcpy(o, d, (size_t)X + 1);
		o += X + 1;
		if (last > X) {
			*o++ = '.';
			memcpy(o, d + X + 1, (size_t)(last - X));
			o += last - X;
		}
	} else {
		*o++ = '0';
		*o++ = '.';
		for (int i = -1; i > X; i--)
			*o++ = '0';
		memcpy(o, d, (size_t)last + 1);
		o += last + 1;
	}
	*o = 0;
	return (int)(o - out);
}

static char *put_field(char *o, const char *s, size_t len)
{
	memcpy(o, s, len);
	o[len] = 0; /* a separator that no field holds */
	return o + len + 1;
}

/* The hashed text: each field and a NUL; the numbers as "%.17g|%.17g|%.17g|%llu". Stored ids are
 * hashes of exactly these bytes, so the text never changes. */
void tk_report_set_id(tk_report *r)
{
	const char *f[TK_STORE_NKEYS + 4] = {r->kind};
	for (int k = 0; k < TK_STORE_NKEYS; k++)
		f[1 + k] = r->keys[k];
	f[TK_STORE_NKEYS + 1] = r->rkey;
	f[TK_STORE_NKEYS + 2] = r->thread;
	f[TK_STORE_NKEYS + 3] = r->signature;
	size_t fl[TK_STORE_NKEYS + 4], total = 3 * 32 + 24 + 1; /* and the numbers */
	for (int i = 0; i < TK_STORE_NKEYS + 4; i++)
		total += (fl[i] = strlen(f[i])) + 1;
	char stack[4096];
	char *b = total <= sizeof stack ? stack : tk_xmalloc(total), *o = b;
	for (int i = 0; i < TK_STORE_NKEYS + 2; i++) /* kind, keys, record key */
		o = put_field(o, f[i], fl[i]);
	o += tk_store_fmt_g17(r->time, o);
	*o++ = '|';
	o += tk_store_fmt_g17(r->duration, o);
	*o++ = '|';
	o += tk_store_fmt_g17(r->avg_cpu, o);
	*o++ = '|';
	char dd[24];
	int i = 24;
	unsigned long long s = (unsigned long long)r->samples;
	do
		dd[--i] = (char)('0' + s % 10);
	while (s /= 10);
	o = put_field(o, dd + i, (size_t)(24 - i));
	o = put_field(o, f[TK_STORE_NKEYS + 2], fl[TK_STORE_NKEYS + 2]);
	o = put_field(o, f[TK_STORE_NKEYS + 3], fl[TK_STORE_NKEYS + 3]);
	sha256_hex(b, (size_t)(o - b), r->id, 32);
	if (b != stack)
		free(b);
}

/* ---- meta.json ---- */

static int meta_from_json(const void *data, size_t n, const char *name, char *keys[TK_STORE_NKEYS], tk_error *err)
{
	json_error_t je;
	json_t *root = json_loadb(data, n, 0, &je);
	if (!root || !json_is_object(root)) {
		json_decref(root);
		return tk_error_set(err, "%s:%d:%d: meta.json is not a JSON object%s%s", name, je.line, je.column,
		                    root ? "" : ": ", root ? "" : je.text);
	}
	for (int k = 0; k < TK_STORE_NKEYS; k++) {
		json_t *v = json_object_get(root, tk_store_key_names[k]);
		if (v && !json_is_string(v)) {
			json_decref(root);
			return tk_error_set(err, "%s: meta.json: \"%s\" is not a string", name, tk_store_key_names[k]);
		}
		if (v)
			keys[k] = tk_xstrdup(json_string_value(v));
	}
	json_decref(root);
	return 0;
}

/* ---- records → reports ---- */

static int add_reports(tk_records *r, char *mkeys[TK_STORE_NKEYS], const tk_report_meta *given, tk_report_set *out,
                       tk_error *err)
{
	const char *keys[TK_STORE_NKEYS];
	for (int k = 0; k < TK_STORE_NKEYS; k++)
		keys[k] = mkeys[k] && *mkeys[k] ? mkeys[k] : given && given->keys[k] ? given->keys[k] : "";
	if (!*keys[TK_STORE_APP] && tk_records_meta(r, "process"))
		keys[TK_STORE_APP] = tk_records_meta(r, "process");
	if (!*keys[TK_STORE_OS] && tk_records_meta(r, "os"))
		keys[TK_STORE_OS] = tk_records_meta(r, "os");
	/* A session recorded without an id: the same run always hashes to the same one — each record
	 * its own run's (launch time, pid), so a directory reused by several runs gives each run's
	 * reports the key that run's own upload bundles get. */
	int derive_session = !*keys[TK_STORE_SESSION];
	const char *lt0 = tk_records_meta(r, "launch-time"), *pid0 = tk_records_meta(r, "pid");
	const char *proc = tk_records_meta(r, "process"), *last_lt = NULL;
	long long last_pid = -2;
	char session[40] = "";
	const char *kept[TK_STORE_NKEYS];
	for (int k = 0; k < TK_STORE_NKEYS; k++)
		kept[k] = derive_session && k == TK_STORE_SESSION ? NULL : tk_report_set_keep(out, keys[k]);
	const char *format = tk_records_meta(r, "format");
	signer S = {.r = r,
	            .given = given,
	            .z = tk_elf_namer_new(),
	            .dsyms = given && given->name_frames && format && strcmp(format, "mthawkeye") == 0};
	for (size_t i = 0; i < tk_records_count(r); i++) {
		const tk_record_info *ri = tk_records_get(r, i);
		if (ri->live) {
			out->live++;
			continue;
		}
		if (derive_session && (!kept[TK_STORE_SESSION] || ri->launch_time != last_lt || ri->run_pid != last_pid)) {
			const char *lt = ri->launch_time ? ri->launch_time : lt0;
			char buf[512], pidbuf[24];
			if (ri->run_pid >= 0)
				snprintf(pidbuf, sizeof pidbuf, "%lld", ri->run_pid);
			snprintf(buf, sizeof buf, "%s|%s|%s", lt ? lt : "", ri->run_pid >= 0 ? pidbuf : pid0 ? pid0 : "",
			         proc ? proc : "");
			sha256_hex(buf, strlen(buf), session, 8);
			kept[TK_STORE_SESSION] = tk_report_set_keep(out, session);
			last_lt = ri->launch_time;
			last_pid = ri->run_pid;
		}
		char *sig = record_signature(&S, i, ri, err);
		if (!sig)
			return tk_elf_namer_free(S.z), -1;
		TK_GROW(out->v, out->cap, out->n + 1);
		tk_report *rep = &out->v[out->n++];
		memset(rep, 0, sizeof *rep);
		rep->kind = tk_report_set_keep(out, ri->kind_name);
		memcpy(rep->keys, kept, sizeof kept);
		rep->rkey = tk_report_set_keep(out, ri->key);
		rep->time = ri->start;
		rep->duration = ri->duration;
		rep->avg_cpu = ri->avg_cpu;
		rep->samples = ri->samples;
		rep->thread = tk_report_set_keep(out, ri->thread ? ri->thread : "");
		rep->signature = tk_report_set_keep(out, sig);
		free(sig);
		tk_report_set_id(rep);
	}
	tk_elf_namer_free(S.z);
	return 0;
}

static void free_keys(char *keys[TK_STORE_NKEYS])
{
	for (int k = 0; k < TK_STORE_NKEYS; k++)
		free(keys[k]);
}

static char *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *buf = NULL;
	size_t cap = 0, len = 0;
	for (;;) {
		TK_GROW(buf, cap, len + 65536);
		size_t got = fread(buf + len, 1, cap - len, f);
		len += got;
		if (got == 0)
			break;
	}
	fclose(f);
	*n = len;
	return buf;
}

int tk_reports_from_records_path(const char *path, const tk_report_meta *given, tk_report_set *out, tk_error *err)
{
	tk_records *r = tk_records_open(path, err);
	if (!r)
		return -1;
	char *keys[TK_STORE_NKEYS] = {0};
	struct stat st;
	int rc = 0;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		char mp[4096];
		snprintf(mp, sizeof mp, "%s/meta.json", path);
		size_t n;
		char *m = slurp(mp, &n);
		if (m)
			rc = meta_from_json(m, n, mp, keys, err);
		free(m);
	}
	if (!rc)
		rc = add_reports(r, keys, given, out, err);
	free_keys(keys);
	tk_records_free(r);
	return rc;
}

int tk_reports_from_bytes(const void *records, size_t n, const void *meta_json, size_t meta_n, const void *images_json,
                          size_t images_n, const char *name, const tk_report_meta *given, tk_report_set *out,
                          tk_error *err)
{
	char *keys[TK_STORE_NKEYS] = {0};
	if (meta_json && meta_from_json(meta_json, meta_n, name, keys, err))
		return free_keys(keys), -1;
	tk_records *r = tk_records_parse(records, n, name, err);
	if (!r)
		return free_keys(keys), -1;
	int rc = 0;
	if (images_json) {
		/* the reader takes images from a file */
		char tmp[] = "/tmp/tracekit-images-XXXXXX";
		int fd = mkstemp(tmp);
		if (fd < 0) {
			rc = tk_error_set(err, "%s: cannot make a temporary file for images.json: %s", name,
			                  strerror(errno));
		} else {
			size_t done = 0;
			while (done < images_n) {
				ssize_t w = write(fd, (const char *)images_json + done, images_n - done);
				if (w <= 0)
					break;
				done += (size_t)w;
			}
			close(fd);
			if (done < images_n)
				rc = tk_error_set(err, "%s: cannot write a temporary images.json", name);
			else if (tk_records_load_images(r, tmp, err))
				rc = -1;
			unlink(tmp);
		}
	}
	if (!rc)
		rc = add_reports(r, keys, given, out, err);
	free_keys(keys);
	tk_records_free(r);
	return rc;
}
