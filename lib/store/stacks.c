/* A report's stacks as folded text (the lines `tracekit collapse --event N` writes for its record),
 * their content hash (the key of the store's stacks table, so identical stacks are stored once),
 * and the merging of many reports' stacks into one flame graph's. */
#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/internal.h"
#include "util/hidx.h"
#include "util/mem.h"

typedef struct text {
	char *p;
	size_t n, cap;
} text;

static void tput(text *t, const char *s, size_t n)
{
	TK_GROW(t->p, t->cap, t->n + n + 1);
	memcpy(t->p + t->n, s, n);
	t->n += n;
	t->p[t->n] = 0;
}

/* A frame as the folded writer spells it: ';' and line breaks would break the format. */
static void tput_frame(text *t, const char *label)
{
	size_t at = t->n, n = strlen(label);
	tput(t, label, n);
	for (size_t i = at; i < t->n; i++)
		if (t->p[i] == ';')
			t->p[i] = ':';
		else if (t->p[i] == '\n' || t->p[i] == '\r')
			t->p[i] = ' ';
}

/* v in decimal, ending at end (no NUL): returns where the digits start. */
static char *dec_back(char *end, uint64_t v)
{
	do
		*--end = (char)('0' + v % 10);
	while (v /= 10);
	return end;
}

/* w / 10^d exactly, trailing zeros of the fraction dropped (as the writers print weights):
 * " W\n" or " I.F\n", without printf (a MetricKit diagnostic has ~100 lines). */
static void put_weight(text *t, uint64_t w, unsigned d)
{
	char buf[48], *end = buf + sizeof buf, *at = end;
	uint64_t m = 1;
	for (unsigned i = 0; i < d && i < 19; i++)
		m *= 10;
	uint64_t ip = w / m, f = w % m;
	*--at = '\n';
	if (f) {
		while (f % 10 == 0)
			f /= 10, d--;
		char *fs = dec_back(at, f);
		while ((unsigned)(at - fs) < d) /* %0*llu: zero-padded to d digits */
			*--fs = '0';
		at = fs;
		*--at = '.';
	}
	at = dec_back(at, ip);
	*--at = ' ';
	tput(t, at, (size_t)(end - at));
}

/* One stack of a thread: its labels root first. */
typedef struct path {
	const char **label;
	size_t at, depth; /* at: where label starts in the labels of all paths */
	uint64_t weight;
} path;

static int path_cmp(const void *a, const void *b)
{
	const path *x = a, *y = b;
	for (size_t i = 0; i < x->depth && i < y->depth; i++) {
		if (x->label[i] == y->label[i]) /* one frame's label (labels are made once per frame) */
			continue;
		int c = strcmp(x->label[i], y->label[i]);
		if (c)
			return c;
	}
	return (x->depth > y->depth) - (x->depth < y->depth); /* a caller's line before its callees' */
}

/* A frame's label: its symbol, else image+0xOFFSET (the same on every device, unlike the slid
 * address; as signatures name frames), else the address as tk_frame_label writes it. */
static const char *frame_label(const tk_profile *p, tk_frame_id id, char **owned)
{
	const tk_frame *f = tk_frame_get(p, id);
	if (f->name)
		return tk_string(p, f->name);
	const tk_binary *b = tk_binary_get(p, f->binary);
	char buf[32];
	if (b && f->addr >= b->load_addr) {
		/* as "%s+0x%llx" writes it, without printf (a fifth of a report's folding) */
		const char *image = tk_string(p, b->name);
		size_t il = strlen(image);
		uint64_t off = f->addr - b->load_addr;
		int nd = 1;
		while (nd < 16 && off >> (4 * nd))
			nd++;
		char *o = *owned = tk_xmalloc(il + 4 + (size_t)nd);
		memcpy(o, image, il);
		memcpy(o + il, "+0x", 3);
		for (int i = 0; i < nd; i++)
			o[il + 3 + i] = "0123456789abcdef"[(off >> (4 * (nd - 1 - i))) & 15];
		o[il + 3 + nd] = 0;
		return *owned;
	}
	const char *l = tk_frame_label(p, id, buf);
	return l == buf ? (*owned = tk_xstrdup(buf)) : l;
}

/* Labels of one event's frames, made once per frame (a frame is on many of its stacks' paths). */
typedef struct labels {
	const tk_profile *p;
	tk_hidx idx;        /* frame id -> slot */
	tk_frame_id *frame; /* by slot */
	const char **label;
	char **owned; /* malloc'd labels, freed with the table */
	size_t n, cap, nowned, capowned;
} labels;

static int label_eq(const void *ctx, uint32_t idx, const void *key)
{
	return ((const labels *)ctx)->frame[idx] == *(const tk_frame_id *)key;
}

static const char *label_of(labels *L, tk_frame_id id)
{
	uint64_t h = tk_hash_u64(id);
	uint32_t at = tk_hidx_find(&L->idx, h, label_eq, L, &id);
	if (at != UINT32_MAX)
		return L->label[at];
	char *own = NULL;
	const char *l = frame_label(L->p, id, &own);
	if (own) {
		TK_GROW(L->owned, L->capowned, L->nowned + 1);
		L->owned[L->nowned++] = own;
	}
	if (L->n + 1 > L->cap) {
		size_t c = L->cap;
		TK_GROW(L->frame, c, L->n + 1);
		TK_GROW(L->label, L->cap, L->n + 1);
	}
	L->frame[L->n] = id;
	L->label[L->n] = l;
	tk_hidx_insert(&L->idx, h, (uint32_t)L->n);
	return L->label[L->n++];
}

/* The prefix-coded form's first line: a line without a space, which no folded text has (each of its
 * lines ends in " COUNT"). */
#define CODED "@prefix-coded\n"
#define CODED_LEN (sizeof CODED - 1)

/* The stacks of event e as stored (tk_report.stacks): the folded lines `tracekit collapse --no-thread
 * --event N` writes for the threads the event owns (its snapshot's context threads left out, as a
 * reader without event_context never makes them), frames without a symbol named image+0xOFFSET:
 * stacks with the same labels merged, lines in depth-first order of labels, an empty stack
 * "(no stack)" — each line prefix-coded: "K REST COUNT" where K is how many of the previous line's
 * frames it begins with and REST its other frames (";"-joined), after the line CODED. A MetricKit
 * diagnostic's tree of ~100 leaves ~20 deep is ~30 KB of folded text and ~3 KB coded;
 * tk_store_stacks_text gives the folded text back. */
char *tk_store_event_folded(const tk_profile *p, tk_event_id e)
{
	text out = {0};
	tput(&out, "", 0);
	path *pv = NULL;
	size_t np = 0, cap = 0;
	const char **all = NULL; /* every path's labels, one after another */
	size_t nall = 0, capall = 0;
	labels L = {.p = p};
	tk_frame_id *fr = NULL;
	size_t capfr = 0;
	size_t nt = tk_thread_count(p);
	for (size_t i = 0; i < nt; i++) {
		const tk_thread *x = tk_thread_get(p, (tk_thread_id)i);
		if (x->event != e || x->role == TK_ROLE_CONTEXT || !x->samples)
			continue;
		size_t ns;
		const tk_stack_weight *sw = tk_thread_stacks(p, (tk_thread_id)i, &ns);
		for (size_t j = 0; j < ns; j++) {
			size_t depth = sw[j].stack ? tk_stack_frames(p, sw[j].stack, fr, capfr) : 0;
			if (depth > capfr) {
				TK_GROW(fr, capfr, depth);
				depth = tk_stack_frames(p, sw[j].stack, fr, capfr);
			}
			TK_GROW(pv, cap, np + 1);
			path *pa = &pv[np++];
			pa->at = nall;
			pa->depth = depth;
			pa->weight = sw[j].weight;
			TK_GROW(all, capall, nall + depth);
			for (size_t d = 0; d < depth; d++)
				all[nall++] = label_of(&L, fr[d]);
		}
	}
	for (size_t j = 0; j < np; j++)
		pv[j].label = all ? all + pv[j].at : NULL; /* all no longer moves (NULL: every path empty) */
	if (np)
		qsort(pv, np, sizeof *pv, path_cmp);
	unsigned dec = tk_profile_weight_decimals(p);
	const path *prev = NULL; /* the last line written */
	for (size_t j = 0; j < np;) {
		uint64_t w = 0;
		size_t k = j;
		for (; k < np && path_cmp(&pv[j], &pv[k]) == 0; k++)
			w += pv[k].weight;
		if (w) {
			if (!out.n)
				tput(&out, CODED, CODED_LEN);
			size_t same = 0;
			while (prev && same < prev->depth && same < pv[j].depth &&
			       (prev->label[same] == pv[j].label[same] ||
			        strcmp(prev->label[same], pv[j].label[same]) == 0))
				same++;
			char num[24], *ne = num + sizeof num - 1;
			*ne = ' ';
			char *ns = dec_back(ne, same);
			tput(&out, ns, (size_t)(ne + 1 - ns));
			if (!pv[j].depth)
				tput(&out, "(no stack)", 10);
			for (size_t d = same; d < pv[j].depth; d++) {
				if (d > same)
					tput(&out, ";", 1);
				tput_frame(&out, pv[j].label[d]);
			}
			put_weight(&out, w, dec);
			prev = &pv[j];
		}
		j = k;
	}
	free(all);
	free(pv);
	for (size_t j = 0; j < L.nowned; j++)
		free(L.owned[j]);
	free(L.owned);
	free(L.frame);
	free(L.label);
	tk_hidx_free(&L.idx);
	free(fr);
	return out.p;
}

char *tk_store_stacks_text(const char *stored)
{
	if (!stored)
		return tk_xstrdup("");
	if (strncmp(stored, CODED, CODED_LEN) != 0)
		return tk_xstrdup(stored); /* folded text as it was stored before (or given by a caller) */
	text out = {0};
	tput(&out, "", 0);
	size_t *ends = NULL, nends = 0, capends = 0; /* the previous line's frame ends, from its start */
	size_t pstart = 0;
	for (const char *line = stored + CODED_LEN; *line;) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);
		const char *next = line + len + (end != NULL);
		char *after;
		unsigned long long same = strtoull(line, &after, 10);
		const char *sp = memrchr(line, ' ', len);
		if (after == line || *after != ' ' || !sp || sp <= after) { /* not ours: skipped */
			line = next;
			continue;
		}
		if (same > nends)
			same = nends;
		const char *rest = after + 1;
		size_t start = out.n, keep = same ? ends[same - 1] : 0;
		TK_GROW(out.p, out.cap, out.n + keep + 2);
		memcpy(out.p + out.n, out.p + pstart, keep); /* appended past the end: no overlap */
		out.n += keep;
		if (same)
			out.p[out.n++] = ';';
		out.p[out.n] = 0;
		nends = same;
		size_t from = out.n;
		tput(&out, rest, (size_t)(sp - rest));
		for (size_t i = from; i <= out.n; i++)
			if (i == out.n || out.p[i] == ';') {
				TK_GROW(ends, capends, nends + 1);
				ends[nends++] = i - start;
			}
		tput(&out, sp, (size_t)(line + len - sp));
		tput(&out, "\n", 1);
		pstart = start;
		line = next;
	}
	free(ends);
	return out.p;
}

/* SHA-256 from OpenSSL (SHA-NI where the CPU has it). EVP_Digest(…, EVP_sha256(), …) looks the
 * algorithm up and makes a context on every call: ~7 k instructions a call on top of ~4 k of
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

void tk_store_sha256_hex(const void *data, size_t n, char *hex, int bytes)
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

/* Stack texts hashed lately, with their hashes: a fleet's reports repeat a few stacks (40 000
 * generated hangs hold 1 789 distinct texts), so most reports' text is found here by a 64-bit hash
 * and one memcmp instead of being hashed again (~11 k instructions a report, an eighth of decoding an
 * upload). One table for the process (the upload decoders' threads share it), bounded: emptied when
 * it holds STK_MEMO_BYTES of text. */
#define STK_MEMO_BYTES (4u << 20)
typedef struct stk_memo_ent {
	char *text;
	size_t n;
	char hex[33];
} stk_memo_ent;
static struct {
	pthread_mutex_t mu;
	tk_hidx idx;
	stk_memo_ent *e;
	size_t ne, cap, bytes;
} stk_memo = {.mu = PTHREAD_MUTEX_INITIALIZER};

typedef struct stk_memo_key {
	const char *text;
	size_t n;
} stk_memo_key;

static int stk_memo_eq(const void *ctx, uint32_t idx, const void *key)
{
	const stk_memo_ent *e = &stk_memo.e[idx];
	const stk_memo_key *k = key;
	return e->n == k->n && memcmp(e->text, k->text, k->n) == 0;
}

void tk_store_stacks_hash(const char *folded, char hex[33])
{
	size_t n = strlen(folded);
	uint64_t h = tk_hash_bytes(folded, n, 0x5eed);
	stk_memo_key k = {folded, n};
	pthread_mutex_lock(&stk_memo.mu);
	uint32_t at = tk_hidx_find(&stk_memo.idx, h, stk_memo_eq, NULL, &k);
	if (at != UINT32_MAX) {
		memcpy(hex, stk_memo.e[at].hex, 33);
		pthread_mutex_unlock(&stk_memo.mu);
		return;
	}
	pthread_mutex_unlock(&stk_memo.mu);
	tk_store_sha256_hex(folded, n, hex, 16);
	if (n > STK_MEMO_BYTES / 16)
		return;
	char *copy = tk_xmalloc(n);
	memcpy(copy, folded, n);
	pthread_mutex_lock(&stk_memo.mu);
	if (tk_hidx_find(&stk_memo.idx, h, stk_memo_eq, NULL, &k) != UINT32_MAX) { /* another thread's */
		pthread_mutex_unlock(&stk_memo.mu);
		free(copy);
		return;
	}
	if (stk_memo.bytes + n > STK_MEMO_BYTES) {
		for (size_t i = 0; i < stk_memo.ne; i++)
			free(stk_memo.e[i].text);
		stk_memo.ne = stk_memo.bytes = 0;
		tk_hidx_free(&stk_memo.idx);
		memset(&stk_memo.idx, 0, sizeof stk_memo.idx);
	}
	TK_GROW(stk_memo.e, stk_memo.cap, stk_memo.ne + 1);
	stk_memo_ent *e = &stk_memo.e[stk_memo.ne];
	e->text = copy;
	e->n = n;
	memcpy(e->hex, hex, 33);
	stk_memo.bytes += n;
	tk_hidx_insert(&stk_memo.idx, h, (uint32_t)stk_memo.ne++);
	pthread_mutex_unlock(&stk_memo.mu);
}

/* ---- merging ---- */

/* A count of a folded line: an integer or a decimal, kept as units of 10^-9. */
typedef unsigned __int128 u128;
#define FRAC 9

static int parse_count(const char *s, size_t n, u128 *v, unsigned *dec)
{
	u128 x = 0;
	size_t i = 0;
	unsigned d = 0;
	for (; i < n && s[i] >= '0' && s[i] <= '9'; i++)
		x = x * 10 + (unsigned)(s[i] - '0');
	if (i == 0)
		return -1;
	if (i < n && s[i] == '.') {
		for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++)
			if (d < FRAC)
				x = x * 10 + (unsigned)(s[i] - '0'), d++;
	}
	if (i != n)
		return -1;
	*dec = d;
	for (; d < FRAC; d++)
		x *= 10;
	*v = x;
	return 0;
}

typedef struct mline {
	const char *stack;
	size_t len;
	u128 count;
} mline;

static int mline_cmp(const void *a, const void *b)
{
	const mline *x = a, *y = b;
	size_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->stack, y->stack, n);
	return c ? c : (x->len > y->len) - (x->len < y->len);
}

static void put_u128(text *t, u128 v)
{
	char d[48];
	int i = 48;
	do
		d[--i] = (char)('0' + (int)(v % 10));
	while (v /= 10);
	tput(t, d + i, (size_t)(48 - i));
}

char *tk_store_folded_merge(const char *const *folded, const uint64_t *times, size_t n)
{
	mline *v = NULL;
	size_t nv = 0, cap = 0;
	for (size_t i = 0; i < n; i++) {
		for (const char *line = folded[i]; *line;) {
			const char *end = strchr(line, '\n');
			size_t len = end ? (size_t)(end - line) : strlen(line);
			const char *sp = memrchr(line, ' ', len);
			u128 c;
			unsigned dec;
			if (sp && parse_count(sp + 1, len - (size_t)(sp + 1 - line), &c, &dec) == 0) {
				TK_GROW(v, cap, nv + 1);
				v[nv++] = (mline){line, (size_t)(sp - line), c * (times ? times[i] : 1)};
			}
			line += len + (end != NULL);
		}
	}
	if (nv)
		qsort(v, nv, sizeof *v, mline_cmp);
	text out = {0};
	tput(&out, "", 0);
	u128 scale = 1;
	for (int k = 0; k < FRAC; k++)
		scale *= 10;
	for (size_t i = 0; i < nv;) {
		u128 sum = 0;
		size_t j = i;
		for (; j < nv && mline_cmp(&v[i], &v[j]) == 0; j++)
			sum += v[j].count;
		tput(&out, v[i].stack, v[i].len);
		tput(&out, " ", 1);
		put_u128(&out, sum / scale);
		u128 f = sum % scale;
		if (f) {
			char frac[FRAC + 2];
			int d = FRAC;
			frac[0] = '.';
			for (int k = FRAC; k > 0; k--, f /= 10)
				frac[k] = (char)('0' + (int)(f % 10));
			while (frac[d] == '0')
				d--;
			tput(&out, frac, (size_t)d + 1);
		}
		tput(&out, "\n", 1);
		i = j;
	}
	free(v);
	return out.p;
}
