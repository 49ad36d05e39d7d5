/*
 * pprof: a gzip'd perftools.profiles.Profile (proto/profile.proto), encoded by protobuf-c.
 *
 *   sample_type   ["samples","count"] and the weight: ["cpu","nanoseconds"] for time profiles,
 *                 ["cycles","count"], ["events","count"] or ["weight","count"]; the weight is the
 *                 default sample type
 *   sample        one per distinct (thread, stack): location ids leaf first, values [samples,
 *                 weight], labels thread (name), tid, pid and process
 *   mapping       one per binary: memory_start = load address, memory_limit = past the highest
 *                 address seen in it, filename = path, build_id = the UUID
 *   location      one per frame: its address and binary, one line (function, source line); and
 *                 one per inline chain met in the samples (an outer frame with the frames inlined
 *                 into it at that place, TK_FRAME_INLINED from --symbols): the outer frame's address
 *                 and one line per frame, the innermost first, as pprof represents inlining
 *   function      one per function (label + binary); filename = a source path seen in it
 *
 * Streaming: a protobuf message followed by another of the same type parses as their merge, with
 * repeated fields appended. So the profile is written as a sequence of small Profile messages,
 * each carrying a batch of samples (or locations, functions, mappings) plus the strings first used
 * by that batch, packed by protobuf-c straight into a deflate stream. Memory: one batch and the
 * string index, never the whole encoded profile.
 */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "profile.pb-c.h"
#include "tracekit/tracekit.h"
#include "tracekit/write.h"
#include "util/hidx.h"
#include "util/mem.h"
#include "util/text.h"
#include "write/functab.h"
#include "write/wutil.h"

int tk_write_pprof(FILE *out, const tk_profile *p, const tk_convert_options *o, tk_error *err);

#define BATCH 4096

/* ---- gzip output behind protobuf-c's buffer interface ---- */
typedef struct gzbuf {
	ProtobufCBuffer base;
	z_stream z;
	FILE *out;
	int failed;
	unsigned char chunk[1 << 16];
} gzbuf;

static void gz_drain(gzbuf *g, int flush)
{
	do {
		g->z.next_out = g->chunk;
		g->z.avail_out = sizeof g->chunk;
		int rc = deflate(&g->z, flush);
		if (rc == Z_STREAM_ERROR) {
			g->failed = 1;
			return;
		}
		size_t n = sizeof g->chunk - g->z.avail_out;
		if (n && fwrite(g->chunk, 1, n, g->out) != n)
			g->failed = 1;
	} while (g->z.avail_out == 0 && !g->failed);
}

static void gz_append(ProtobufCBuffer *b, size_t len, const uint8_t *data)
{
	gzbuf *g = (gzbuf *)b;
	if (g->failed)
		return;
	g->z.next_in = (unsigned char *)data;
	g->z.avail_in = (uInt)len;
	gz_drain(g, Z_NO_FLUSH);
}

/* ---- the string table ---- */
typedef struct strtab {
	const char **s; /* index -> text (owned by the profile, or literals, or owned[]) */
	size_t n, cap;
	size_t emitted; /* strings [0, emitted) are already written */
	tk_hidx idx;
	char **owned;
	size_t nowned, capowned;
} strtab;

static int str_eq(const void *c, uint32_t i, const void *key)
{
	return strcmp(((const strtab *)c)->s[i], key) == 0;
}

static int64_t str_own(strtab *t, char *s);
static int64_t str_id(strtab *t, const char *s)
{
	if (!tk_utf8_valid(s)) /* protobuf strings are UTF-8: each ill-formed subpart becomes U+FFFD */
		return str_own(t, tk_utf8_dup(s));
	uint64_t h = tk_hash_bytes(s, strlen(s), 0);
	uint32_t i = tk_hidx_find(&t->idx, h, str_eq, t, s);
	if (i != UINT32_MAX)
		return i;
	TK_GROW(t->s, t->cap, t->n + 1);
	t->s[t->n] = s;
	tk_hidx_insert(&t->idx, h, (uint32_t)t->n);
	return (int64_t)t->n++;
}

/* A string that does not live in the profile (formatted here): kept until the end. */
static int64_t str_own(strtab *t, char *s)
{
	TK_GROW(t->owned, t->capowned, t->nowned + 1);
	t->owned[t->nowned++] = s;
	return str_id(t, s);
}

/* Write msg (a Profile holding one batch) with the strings added since the last batch. */
static void flush(gzbuf *g, strtab *t, Perftools__Profiles__Profile *msg)
{
	msg->n_string_table = t->n - t->emitted;
	msg->string_table = (char **)(t->s + t->emitted);
	protobuf_c_message_pack_to_buffer(&msg->base, &g->base);
	t->emitted = t->n;
	Perftools__Profiles__Profile empty = PERFTOOLS__PROFILES__PROFILE__INIT;
	*msg = empty;
}

/* Inline chains: an outer frame with the frames inlined into it at the same place, leaf first.
 * Each distinct chain is one Location with one Line per frame (pprof's inlining). */
typedef struct chains {
	tk_frame_id *pool; /* frames of every chain, leaf first */
	size_t npool, cappool;
	struct {
		size_t off, len;
	} * c;
	size_t n, cap;
	tk_hidx idx;
} chains;

typedef struct chain_key {
	const tk_frame_id *f;
	size_t len;
} chain_key;

static int chain_eq(const void *ctx, uint32_t i, const void *key)
{
	const chains *ch = ctx;
	const chain_key *k = key;
	return ch->c[i].len == k->len && memcmp(ch->pool + ch->c[i].off, k->f, k->len * sizeof *k->f) == 0;
}

static uint32_t chain_id(chains *ch, const tk_frame_id *f, size_t len)
{
	chain_key k = {f, len};
	uint64_t h = tk_hash_bytes(f, len * sizeof *f, 7);
	uint32_t i = tk_hidx_find(&ch->idx, h, chain_eq, ch, &k);
	if (i != UINT32_MAX)
		return i;
	TK_GROW(ch->pool, ch->cappool, ch->npool + len);
	memcpy(ch->pool + ch->npool, f, len * sizeof *f);
	TK_GROW(ch->c, ch->cap, ch->n + 1);
	ch->c[ch->n].off = ch->npool;
	ch->c[ch->n].len = len;
	ch->npool += len;
	tk_hidx_insert(&ch->idx, h, (uint32_t)ch->n);
	return (uint32_t)ch->n++;
}

/* Location ids of a stack (frames root first), leaf first: a frame alone is its own location (id =
 * frame id); an outer frame with inlined callees is one chain location (id nf + 1 + chain). tmp
 * holds at least d frames. */
static size_t stack_locations(const tk_profile *p, const tk_frame_id *fr, size_t d, uint64_t *ids, chains *ch,
                              size_t nf, tk_frame_id *tmp)
{
	size_t n = 0, j = d;
	while (j > 0) {
		j--; /* fr[j]: the leaf-most frame not yet placed */
		if (!(tk_frame_get(p, fr[j])->flags & TK_FRAME_INLINED)) {
			ids[n++] = fr[j];
			continue;
		}
		/* Inlined frames up to their outer frame (or the root, if the stack has none). */
		size_t m = 0;
		for (;;) {
			tmp[m++] = fr[j];
			if (!(tk_frame_get(p, fr[j])->flags & TK_FRAME_INLINED) || j == 0)
				break;
			j--;
		}
		ids[n++] = nf + 1 + chain_id(ch, tmp, m);
	}
	return n;
}

typedef struct binfo {
	uint64_t lo, hi; /* address range seen */
	int named, unnamed, lines, inlined;
} binfo;

int tk_write_pprof(FILE *out, const tk_profile *p, const tk_convert_options *o, tk_error *err)
{
	if (tk_profile_weight_decimals(p))
		return tk_error_set(err,
		                    "pprof: its values are whole numbers, and these weights have %u decimals "
		                    "(folded counts such as 1.5): write speedscope, folded or SVG instead",
		                    tk_profile_weight_decimals(p));
	gzbuf *g = tk_xcalloc(1, sizeof *g);
	g->base.append = gz_append;
	g->out = out;
	if (deflateInit2(&g->z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		free(g);
		return tk_error_set(err, "pprof: cannot start gzip");
	}
	strtab st = {0};
	str_id(&st, "");
	Perftools__Profiles__Profile msg = PERFTOOLS__PROFILES__PROFILE__INIT;

	/* Header: sample types, duration, comment. */
	/* Indexed by tk_unit; pprof names allocation profiles "space" in "bytes". */
	static const char *const wtype[] = {"cpu", "cycles", "events", "weight", "space"};
	tk_unit u = tk_profile_unit(p);
	Perftools__Profiles__ValueType vt[2] = {PERFTOOLS__PROFILES__VALUE_TYPE__INIT,
	                                        PERFTOOLS__PROFILES__VALUE_TYPE__INIT};
	vt[0].type = str_id(&st, "samples");
	vt[0].unit = str_id(&st, "count");
	vt[1].type = str_id(&st, wtype[u <= TK_UNIT_BYTES ? u : TK_UNIT_SAMPLES]);
	vt[1].unit = str_id(&st, u == TK_UNIT_NS ? "nanoseconds" : u == TK_UNIT_BYTES ? "bytes" : "count");
	Perftools__Profiles__ValueType *vtp[2] = {&vt[0], &vt[1]};
	Perftools__Profiles__ValueType period = vt[1];
	msg.n_sample_type = 2;
	msg.sample_type = vtp;
	msg.default_sample_type = vt[1].type;
	msg.period_type = &period;
	uint64_t tmin = UINT64_MAX, tmax = 0;
	for (size_t t = 0; t < tk_thread_count(p); t++) {
		const tk_thread *th = tk_thread_get(p, (tk_thread_id)t);
		if (th->samples && th->t_min <= th->t_max) {
			tmin = th->t_min < tmin ? th->t_min : tmin;
			tmax = th->t_max > tmax ? th->t_max : tmax;
		}
	}
	if (tmin <= tmax)
		msg.duration_nanos = (int64_t)(tmax - tmin);
	char *comment = tk_xmalloc(64 + strlen(o && o->title ? o->title : ""));
	sprintf(comment, "tracekit %s%s%s", TK_VERSION, o && o->title ? ": " : "", o && o->title ? o->title : "");
	int64_t cid = str_own(&st, comment);
	msg.n_comment = 1;
	msg.comment = &cid;
	flush(g, &st, &msg);

	/* Mappings: one per binary, with the address range its frames cover. */
	size_t nb = tk_binary_count(p), nf = tk_frame_count(p);
	binfo *bi = tk_xcalloc(nb + 1, sizeof *bi);
	for (tk_frame_id f = 1; f <= nf; f++) {
		const tk_frame *fr = tk_frame_get(p, f);
		binfo *b = &bi[fr->binary];
		if (!fr->binary)
			continue;
		if (!b->named && !b->unnamed)
			b->lo = b->hi = fr->addr;
		b->lo = fr->addr < b->lo ? fr->addr : b->lo;
		b->hi = fr->addr > b->hi ? fr->addr : b->hi;
		fr->name ? b->named++ : b->unnamed++;
		b->lines += fr->line != 0;
		b->inlined += (fr->flags & TK_FRAME_INLINED) != 0;
	}
	/* go tool pprof and others take the first mapping for the main binary: put the executable
	 * (the binary named like the heaviest thread's process) first, else keep the table's order. */
	tk_binary_id main_bin = 0;
	uint64_t heaviest = 0;
	for (size_t t = 0; t < tk_thread_count(p); t++) {
		const tk_thread *th = tk_thread_get(p, (tk_thread_id)t);
		if (th->process && th->weight >= heaviest) {
			for (tk_binary_id b = 1; b <= nb; b++)
				if (tk_binary_get(p, b)->name == th->process) {
					main_bin = b;
					heaviest = th->weight;
					break;
				}
		}
	}
	Perftools__Profiles__Mapping *maps = tk_xcalloc(BATCH, sizeof *maps);
	Perftools__Profiles__Mapping **mapp = tk_xcalloc(BATCH, sizeof *mapp);
	for (size_t i = 0; i < nb;) {
		size_t k = 0;
		for (; k < BATCH && i < nb; k++, i++) {
			/* i = 0 is the main binary, then the others in order. */
			tk_binary_id b = !main_bin      ? (tk_binary_id)(i + 1)
			                 : i == 0       ? main_bin
			                 : i < main_bin ? (tk_binary_id)i
			                                : (tk_binary_id)(i + 1);
			const tk_binary *bin = tk_binary_get(p, b);
			Perftools__Profiles__Mapping m = PERFTOOLS__PROFILES__MAPPING__INIT;
			m.id = b;
			m.memory_start = bin->load_addr ? bin->load_addr : bi[b].lo;
			m.memory_limit = bi[b].hi >= m.memory_start ? bi[b].hi + 1 : m.memory_start + 1;
			m.filename = str_id(&st, tk_string(p, bin->path ? bin->path : bin->name));
			m.build_id = str_id(&st, tk_string(p, bin->uuid));
			m.has_functions = bi[b].named && !bi[b].unnamed;
			m.has_filenames = m.has_functions;
			m.has_line_numbers = bi[b].lines > 0;
			m.has_inline_frames = bi[b].inlined > 0;
			maps[k] = m;
			mapp[k] = &maps[k];
		}
		msg.n_mapping = k;
		msg.mapping = mapp;
		flush(g, &st, &msg);
	}
	free(maps);
	free(mapp);
	free(bi);

	/* Functions. */
	tk_functab ft;
	tk_functab_build(&ft, p);
	Perftools__Profiles__Function *fns = tk_xcalloc(BATCH, sizeof *fns);
	Perftools__Profiles__Function **fnp = tk_xcalloc(BATCH, sizeof *fnp);
	char lbuf[32];
	for (uint32_t i = 0; i < ft.n;) {
		size_t k = 0;
		for (; k < BATCH && i < ft.n; k++, i++) {
			const tk_frame *fr = tk_frame_get(p, ft.first[i]);
			Perftools__Profiles__Function fn = PERFTOOLS__PROFILES__FUNCTION__INIT;
			fn.id = i + 1;
			const char *label = tk_frame_label(p, ft.first[i], lbuf);
			fn.name = fr->name ? str_id(&st, label) : str_own(&st, tk_xstrdup(label));
			fn.system_name = fn.name;
			fn.filename = str_id(&st, tk_string(p, fr->file));
			fns[k] = fn;
			fnp[k] = &fns[k];
		}
		msg.n_function = k;
		msg.function = fnp;
		flush(g, &st, &msg);
	}
	free(fns);
	free(fnp);

	/* Locations: one per frame. */
	Perftools__Profiles__Location *locs = tk_xcalloc(BATCH, sizeof *locs);
	Perftools__Profiles__Location **locp = tk_xcalloc(BATCH, sizeof *locp);
	Perftools__Profiles__Line *lines = tk_xcalloc(BATCH, sizeof *lines);
	Perftools__Profiles__Line **linep = tk_xcalloc(BATCH, sizeof *linep);
	for (tk_frame_id f = 1; f <= nf;) {
		size_t k = 0;
		for (; k < BATCH && f <= nf; k++, f++) {
			const tk_frame *fr = tk_frame_get(p, f);
			Perftools__Profiles__Location l = PERFTOOLS__PROFILES__LOCATION__INIT;
			Perftools__Profiles__Line ln = PERFTOOLS__PROFILES__LINE__INIT;
			l.id = f;
			l.mapping_id = fr->binary;
			l.address = fr->addr;
			ln.function_id = ft.of_frame[f] + 1;
			ln.line = fr->line;
			lines[k] = ln;
			linep[k] = &lines[k];
			l.n_line = 1;
			l.line = &linep[k];
			locs[k] = l;
			locp[k] = &locs[k];
		}
		msg.n_location = k;
		msg.location = locp;
		flush(g, &st, &msg);
	}
	free(locs);
	free(locp);
	free(lines);
	free(linep);

	/* Samples, thread by thread. */
	Perftools__Profiles__Sample *sm = tk_xcalloc(BATCH, sizeof *sm);
	Perftools__Profiles__Sample **smp = tk_xcalloc(BATCH, sizeof *smp);
	int64_t *vals = tk_xcalloc(2 * BATCH, sizeof *vals);
	size_t *nloc = tk_xcalloc(BATCH, sizeof *nloc), captmp = 0;
	tk_frame_id *tmpf = NULL;
	chains ch = {0};
	uint64_t *ids = NULL;
	size_t nids = 0, capids = 0;
	tk_frame_id *fbuf = NULL;
	size_t capf = 0;
	for (size_t t = 0; t < tk_thread_count(p); t++) {
		const tk_thread *th = tk_thread_get(p, (tk_thread_id)t);
		if (!th->samples)
			continue;
		Perftools__Profiles__Label lab[4] = {PERFTOOLS__PROFILES__LABEL__INIT, PERFTOOLS__PROFILES__LABEL__INIT,
		                                     PERFTOOLS__PROFILES__LABEL__INIT,
		                                     PERFTOOLS__PROFILES__LABEL__INIT};
		Perftools__Profiles__Label *labp[4] = {&lab[0], &lab[1], &lab[2], &lab[3]};
		lab[0].key = str_id(&st, "thread");
		lab[0].str = str_id(&st, th->name ? tk_string(p, th->name) : "(unnamed)");
		lab[1].key = str_id(&st, "tid");
		lab[1].num = (int64_t)th->tid;
		lab[2].key = str_id(&st, "pid");
		lab[2].num = th->pid;
		lab[3].key = str_id(&st, "process");
		lab[3].str = str_id(&st, tk_string(p, th->process));
		size_t ncells;
		const tk_stack_weight *sw = tk_thread_stacks(p, (tk_thread_id)t, &ncells);
		for (size_t c = 0; c < ncells;) {
			size_t k = 0;
			nids = 0;
			/* Location ids of the whole batch first (the array may move while growing). */
			for (size_t c2 = c; k < BATCH && c2 < ncells; k++, c2++) {
				size_t d = tk_stack_depth(p, sw[c2].stack);
				TK_GROW(fbuf, capf, d ? d : 1);
				TK_GROW(ids, capids, nids + d + 1);
				TK_GROW(tmpf, captmp, d ? d : 1);
				tk_stack_frames(p, sw[c2].stack, fbuf, d);
				nloc[k] = stack_locations(p, fbuf, d, ids + nids, &ch, nf, tmpf);
				nids += nloc[k];
			}
			size_t off = 0;
			for (size_t j = 0; j < k; j++, c++) {
				Perftools__Profiles__Sample s = PERFTOOLS__PROFILES__SAMPLE__INIT;
				size_t d = nloc[j];
				s.n_location_id = d;
				s.location_id = ids + off;
				off += d;
				vals[2 * j] = (int64_t)sw[c].samples;
				vals[2 * j + 1] = (int64_t)sw[c].weight;
				s.n_value = 2;
				s.value = &vals[2 * j];
				s.n_label = 4;
				s.label = labp;
				sm[j] = s;
				smp[j] = &sm[j];
			}
			msg.n_sample = k;
			msg.sample = smp;
			flush(g, &st, &msg);
		}
	}
	free(sm);
	free(smp);
	free(vals);
	free(ids);
	free(fbuf);
	free(nloc);
	free(tmpf);

	/* The inline chains met in the samples: one location each, lines leaf first. */
	for (size_t i = 0; i < ch.n;) {
		size_t k = 0, nl = 0;
		for (size_t i2 = i; k < BATCH && i2 < ch.n; k++, i2++)
			nl += ch.c[i2].len;
		Perftools__Profiles__Line *cl = tk_xcalloc(nl, sizeof *cl);
		Perftools__Profiles__Line **clp = tk_xcalloc(nl, sizeof *clp);
		Perftools__Profiles__Location *cloc = tk_xcalloc(k, sizeof *cloc);
		Perftools__Profiles__Location **clocp = tk_xcalloc(k, sizeof *clocp);
		size_t li = 0;
		for (size_t j = 0; j < k; j++, i++) {
			const tk_frame_id *f = ch.pool + ch.c[i].off;
			size_t len = ch.c[i].len;
			const tk_frame *outer = tk_frame_get(p, f[len - 1]);
			Perftools__Profiles__Location l = PERFTOOLS__PROFILES__LOCATION__INIT;
			l.id = nf + 1 + i;
			l.mapping_id = outer->binary;
			l.address = outer->addr;
			l.n_line = len;
			l.line = clp + li;
			for (size_t q = 0; q < len; q++, li++) {
				Perftools__Profiles__Line ln = PERFTOOLS__PROFILES__LINE__INIT;
				ln.function_id = ft.of_frame[f[q]] + 1;
				ln.line = tk_frame_get(p, f[q])->line;
				cl[li] = ln;
				clp[li] = &cl[li];
			}
			cloc[j] = l;
			clocp[j] = &cloc[j];
		}
		msg.n_location = k;
		msg.location = clocp;
		flush(g, &st, &msg);
		free(cl);
		free(clp);
		free(cloc);
		free(clocp);
	}
	free(ch.pool);
	free(ch.c);
	tk_hidx_free(&ch.idx);
	tk_functab_free(&ft);
	if (st.emitted < st.n)
		flush(g, &st, &msg);
	g->z.avail_in = 0;
	gz_drain(g, Z_FINISH);
	deflateEnd(&g->z);
	int failed = g->failed;
	free(g);
	for (size_t i = 0; i < st.nowned; i++)
		free(st.owned[i]);
	free(st.owned);
	free(st.s);
	tk_hidx_free(&st.idx);
	if (failed)
		return tk_error_set(err, "pprof: write error");
	return tk_wu_finish(out, "pprof", err);
}
