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
#include "tracekit/records.h"
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
	for (size_t i = 0; i < sizeof prefix / sizeof prefix[0]; i++)
		if (strncmp(path, prefix[i], strlen(prefix[i])) == 0)
			return 1;
	return 0;
}

/* A frame's name in a signature: the symbol, else image+offset (the same on every device, unlike
 * the slid address), else the raw address. */
static void frame_name(const tk_profile *p, tk_frame_id id, char *buf, size_t n)
{
	const tk_frame *f = tk_frame_get(p, id);
	const tk_binary *b = tk_binary_get(p, f->binary);
	if (f->name)
		snprintf(buf, n, "%s", tk_string(p, f->name));
	else if (b && f->addr >= b->load_addr)
		snprintf(buf, n, "%s+0x%llx", tk_string(p, b->name), (unsigned long long)(f->addr - b->load_addr));
	else
		snprintf(buf, n, "0x%llx", (unsigned long long)f->addr);
}

/* The first TK_STORE_SIGNATURE_FRAMES app frames of a stack, leaf first; all frames when none
 * is an app frame. */
static char *signature_of(const tk_profile *p, tk_stack_id stack)
{
	tk_frame_id fr[256];
	size_t depth = tk_stack_frames(p, stack, fr, 256);
	if (depth > 256)
		depth = 256;
	char *out = tk_xcalloc(1, 2048);
	size_t len = 0;
	for (int pass = 0; pass < 2 && len == 0; pass++) {
		int taken = 0;
		for (size_t i = depth; i-- > 0 && taken < TK_STORE_SIGNATURE_FRAMES;) {
			const tk_frame *f = tk_frame_get(p, fr[i]);
			const tk_binary *b = tk_binary_get(p, f->binary);
			if (f->flags & TK_FRAME_SYNTHETIC)
				continue;
			if (pass == 0 && b && system_binary(tk_string(p, b->path)))
				continue;
			char name[512];
			frame_name(p, fr[i], name, sizeof name);
			size_t nl = strlen(name);
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

/* A hang's signature comes from the blocked thread's stack when the hang was detected (the
 * snapshot's first thread); without a snapshot, from the heaviest path of its tree. */
/* MTHawkeye frames carry their image's UUID: the caller's namer (dSYMs) can name them. Our own
 * sessions were named from their ELF files when read. */
static int name_frames(tk_records *r, tk_profile **p, const tk_report_meta *given, tk_elf_namer *z, tk_error *err)
{
	if (tk_elf_name_listed(p, z, err) < 0) /* a Linux session's own images, files of this machine */
		return -1;
	const char *format = tk_records_meta(r, "format");
	if (!given || !given->name_frames || !format || strcmp(format, "mthawkeye") != 0)
		return 0;
	return given->name_frames(given->name_frames_ctx, p, err);
}

static char *record_signature(tk_records *r, size_t i, const tk_record_info *ri, const tk_report_meta *given,
                              tk_elf_namer *z, tk_error *err)
{
	tk_profile *p = tk_profile_new();
	char *sig = NULL;
	if (ri->kind == TK_RECORD_HANG && ri->nthreads) {
		int n = tk_records_load_threads(r, i, p, 0, err);
		if (n < 0 || name_frames(r, &p, given, z, err))
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
		int64_t t = tk_records_load(r, i, p, 0, err);
		if (t < 0 || name_frames(r, &p, given, z, err))
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

static void add(char **b, size_t *n, size_t *cap, const char *s, size_t len)
{
	TK_GROW(*b, *cap, *n + len + 1);
	memcpy(*b + *n, s, len);
	*n += len;
	(*b)[(*n)++] = 0; /* a separator that no field holds */
}

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

void tk_report_set_id(tk_report *r)
{
	char *b = NULL, num[160];
	size_t n = 0, cap = 0;
	add(&b, &n, &cap, r->kind, strlen(r->kind));
	for (int k = 0; k < TK_STORE_NKEYS; k++)
		add(&b, &n, &cap, r->keys[k], strlen(r->keys[k]));
	add(&b, &n, &cap, r->rkey, strlen(r->rkey));
	int len = snprintf(num, sizeof num, "%.17g|%.17g|%.17g|%llu", r->time, r->duration, r->avg_cpu,
	                   (unsigned long long)r->samples);
	add(&b, &n, &cap, num, (size_t)len);
	add(&b, &n, &cap, r->thread, strlen(r->thread));
	add(&b, &n, &cap, r->signature, strlen(r->signature));
	sha256_hex(b, n, r->id, 32);
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
	tk_elf_namer *z = tk_elf_namer_new(); /* one cache of ELF files for the session's records */
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
		char *sig = record_signature(r, i, ri, given, z, err);
		if (!sig)
			return tk_elf_namer_free(z), -1;
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
	tk_elf_namer_free(z);
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
