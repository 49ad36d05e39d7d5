/* tracekit symbolicate — rewrite an Instruments export with names, files and lines from dSYMs. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>
#include <unistd.h>

#include "analysis.h"
#include "tracekit/apple_report.h"
#include "tracekit/symbol.h"
#include "options.h"
#include "util/hidx.h"
#include "util/mem.h"
#include "util/outfile.h"

TK_COMMAND(symbolicate, "symbolicate Apple reports (.ips, .crash, spindump) or an xctrace export from dSYMs")

enum { OPT_SYMBOLS = 1, OPT_OUTPUT, OPT_CACHE_DIR, OPT_PAC_MASK, OPT_ADJUST, OPT_IMAGE, OPT_JSON, OPT_INPUT };

static const tk_cli_option options[] = {
    TK_OPT_OPERAND(OPT_INPUT, "IN|REPORT|DIR",
                   "an xctrace export (- for standard input), or Apple reports and directories of them"),
    TK_OPT_SECTION("options"),
    TK_OPT_LIST(OPT_SYMBOLS, "--symbols", NULL, "PATH",
                "dSYM, binary, .tksym cache or directory (searched recursively); repeat"),
    TK_OPT_VALUE(OPT_OUTPUT, "--output", "-o", "OUT",
                 "one input: the output file (default standard output); several reports: a directory, one file per "
                 "report (NAME.crash for the text of an .ips, the input's name otherwise; a name another report of the "
                 "batch took becomes NAME.ips.crash, NAME-2.crash …); several reports with -o -: all on standard "
                 "output, one after another in the order stderr lists them"),
    TK_OPT_VALUE(OPT_CACHE_DIR, "--cache-dir", NULL, "DIR",
                 "symbol caches (default $XDG_CACHE_HOME/tracekit or ~/.cache/tracekit)"),
    TK_OPT_SECTION("xctrace exports"),
    TK_OPT_LIST(OPT_IMAGE, "--image", NULL, "SPEC",
                "for address-only stacks (exports before Xcode 14.3): PATH or UUID, optional :ARCH, then @LOADADDR "
                "(hex), e.g. MyApp.app.dSYM@0x104a8c000; repeat. Without it, images listed by kdebug tables exported "
                "with the profile are used"),
    TK_OPT_VALUE(OPT_PAC_MASK, "--pac-mask", NULL, "HEX",
                 "keep these address bits (default arm64: 0xffffffffff, x86_64: all)"),
    TK_OPT_VALUE(OPT_ADJUST, "--adjust", NULL, "auto|none|minus1",
                 "auto (default): return addresses at addr-1, leaf PCs as recorded; none: every address as is; "
                 "minus1: every address at addr-1"),
    TK_OPT_SECTION("Apple reports"),
    TK_OPT_FLAG(OPT_JSON, "--json", NULL, ".ips only: the .ips JSON with symbol, sourceFile and sourceLine filled in"),
    TK_OPT_END};

const tk_cli_command tk_cli_command_symbolicate = {
    .name = "symbolicate",
    .usage = "tracekit symbolicate IN --symbols PATH… [-o OUT] [--image SPEC…] [--pac-mask HEX]\n"
             "                     [--adjust auto|none|minus1] [--cache-dir DIR]\n"
             "tracekit symbolicate REPORT|DIR… --symbols PATH… [-o OUT|DIR] [--json] [--cache-dir DIR]",
    .about = "Reads IN (an `xctrace export` XML, gzip'd or not, - for standard input), resolves every frame\n"
             "whose binary (UUID, load address) is found under the --symbols paths into function, file and\n"
             "line, inlined functions becoming frames of their own, and writes a time-profile export in the\n"
             "Xcode 14.3+ form (frames with <binary> and <source>) to OUT (default standard output).\n"
             "Frames that cannot be resolved keep their exported names; a warning names each missing image.\n"
             "Every row of IN becomes one row of OUT with its original time, thread and weight, in order.\n\n"
             "Apple's reports (.ips crash reports, .crash text, spindump / microstackshot text, gzip'd or not)\n"
             "are written back the way Apple's tools write them, with names, files and lines from the dSYMs:\n"
             "the crash-report text Xcode prints (for .ips and .crash), or the same spindump text. Frames in\n"
             "images without symbols keep what the report says. Directories are searched for reports.\n",
    .options = options,
    .footer = "Each report's frames resolved and left, and the images without symbols (and why), go to stderr.\n",
    .flags = TK_CLI_NO_DASHDASH,
};

static void warn_cb(void *ctx, const char *msg)
{
	tk_cli_warn("symbolicate: %s", msg);
}

static int is_report(const char *path)
{
	struct stat st;
	if (strcmp(path, "-") != 0 && stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return 1;
	tk_error e;
	tk_input *in = tk_input_open(path, &e);
	if (!in)
		return 0;
	size_t n;
	const unsigned char *h = tk_input_head(in, &n);
	int r = tk_apple_report_sniff(h, n) != 0;
	tk_input_close(in);
	return r;
}

/* The outputs of this batch so far: an input's name may give the name another input's output took
 * (NAME.ips written as NAME.crash beside NAME.crash, or NAME.ips in two directories). */
typedef struct taken {
	char **v;
	size_t n;
	tk_hidx idx; /* over v: a batch of 100 000 reports checks each name in constant time */
} taken;

static int taken_eq(const void *ctx, uint32_t i, const void *key)
{
	return !strcmp(((const taken *)ctx)->v[i], key);
}

static int is_taken(const taken *t, const char *name)
{
	return tk_hidx_find(&t->idx, tk_hash_bytes(name, strlen(name), 0), taken_eq, t, name) != UINT32_MAX;
}

/* DIR/NAME for the output of one report of a batch. */
static char *out_name1(const char *dir, const char *in, const tk_apple_report *r, int json, int keep_ext, int nth)
{
	const char *b = strrchr(in, '/');
	b = b ? b + 1 : in;
	size_t n = strlen(b);
	if (n > 3 && !strcmp(b + n - 3, ".gz"))
		n -= 3;
	const char *ext = "";
	if (r->format == TK_APPLE_IPS && !json) {
		if (n > 4 && !strcmp(b + n - 4, ".ips") && !keep_ext)
			n -= 4;
		ext = ".crash";
	}
	/* NAME-2.EXT …: the number before the input's own extension */
	const char *dot = nth > 1 && !*ext ? memchr(b, '.', n) : NULL;
	size_t stem = dot ? (size_t)(dot - b) : n;
	char num[24] = "";
	if (nth > 1)
		snprintf(num, sizeof num, "-%d", nth);
	size_t len = strlen(dir) + n + strlen(num) + strlen(ext) + 2;
	char *o = malloc(len);
	if (o)
		snprintf(o, len, "%s/%.*s%s%.*s%s", dir, (int)stem, b, num, (int)(n - stem), b + stem, ext);
	return o;
}

/* The first of NAME.crash, NAME.ips.crash (for an .ips), NAME-2.crash, NAME-3.crash … that no
 * earlier report of the batch was written to. */
static char *out_name(const char *dir, const char *in, const tk_apple_report *r, int json, taken *t)
{
	char *o = NULL;
	for (int i = 0; i < 1000000; i++) {
		free(o);
		o = out_name1(dir, in, r, json, i == 1, i < 2 ? 1 : i);
		if (!o || !is_taken(t, o))
			break;
	}
	if (o) {
		char **v = realloc(t->v, (t->n + 1) * sizeof *t->v);
		char *c = strdup(o);
		if (v && c) {
			t->v = v;
			tk_hidx_insert(&t->idx, tk_hash_bytes(c, strlen(c), 0), (uint32_t)t->n);
			t->v[t->n++] = c;
		} else {
			if (v)
				t->v = v;
			free(c);
		}
	}
	return o;
}

/* -o -: the reports' text goes to standard output in pieces of at least this (one write each) */
#define STREAM_CHUNK ((size_t)1 << 20)

/* buf[0..*len) to standard output, *len then 0: written as it is (after what stdio holds), not
 * copied into stdio's buffer first */
static int stream_out(const char *buf, size_t *len, tk_error *err)
{
	size_t n = *len;
	*len = 0;
	if (fflush(stdout) != 0 || ferror(stdout))
		return tk_error_set(err, "write failed");
	while (n) {
		ssize_t w = write(STDOUT_FILENO, buf, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return tk_error_set(err, "write failed: %s", strerror(w < 0 ? errno : EIO));
		buf += w;
		n -= (size_t)w;
	}
	return 0;
}

static int symbolicate_reports(const char *const *ins, size_t nin, const char *out, int json, tk_symbolicator *s)
{
	tk_error err;
	char **files = NULL;
	size_t nfiles = 0, skipped = 0;
	/* files in directories are sniffed when read (each opened once), not when listed */
	unsigned char *lazy = NULL;
	if (tk_apple_report_list_ex(ins, nin, &files, &lazy, &nfiles, &err) < 0)
		return tk_cli_fail("symbolicate: %s", err.msg);
	/* whether there is one report or several decides where outputs go: the first two files listed
	 * lazily that count are sniffed now, and those that are not reports dropped */
	size_t seen = 0, kept = 0;
	for (size_t i = 0; i < nfiles; i++) {
		if (seen < 2 && lazy[i]) {
			lazy[i] = 0;
			if (!is_report(files[i])) {
				free(files[i]);
				continue;
			}
		}
		seen++;
		lazy[kept] = lazy[i];
		files[kept++] = files[i];
	}
	nfiles = kept;
	struct stat st;
	/* -o - with several reports: every output on standard output, one after another in the order of
	 * the stderr lines (each exactly as its own file would be): no file to create per report */
	int to_stream = out && !strcmp(out, "-") && (nin > 1 || nfiles != 1);
	int to_dir = !to_stream && (nin > 1 || nfiles != 1 || (out && stat(out, &st) == 0 && S_ISDIR(st.st_mode)));
	if (to_dir && !out) {
		for (size_t i = 0; i < nfiles; i++)
			free(files[i]);
		free(files);
		free(lazy);
		return tk_cli_usage("symbolicate", "several reports: give -o DIR for their outputs");
	}
	if (to_dir && mkdir(out, 0777) != 0 && errno != EEXIST) {
		for (size_t i = 0; i < nfiles; i++)
			free(files[i]);
		free(files);
		free(lazy);
		return tk_cli_fail("symbolicate: %s: %s", out, strerror(errno));
	}
	int failed = 0;
	size_t total_res = 0, total_unres = 0;
	tk_apple_report_symbols *rs = tk_apple_report_symbols_new(s);
	tk_apple_report_reader *rd = tk_apple_report_reader_new();
	char *tbuf = NULL; /* reports' text (tk_apple_report_text_append) */
	size_t tlen = 0, tcap = 0;
	taken used = {0};
	/* the outputs' stdio buffer, one for the batch (each output is closed before the next) */
	char *obuf = malloc(1 << 16);
	/* before any output: a pipe's default buffer is 4 kB (and glibc ignores the size given without a
	 * buffer); the buffers live until exit, which flushes them */
	static char sbuf[1 << 16], ebuf[1 << 14];
	if (to_stream)
		setvbuf(stdout, sbuf, _IOFBF, sizeof sbuf);
	/* a batch's line per report: one write per 16 kB instead of one per line, unless someone watches */
	if (nfiles > 1 && !isatty(2))
		setvbuf(stderr, ebuf, _IOFBF, sizeof ebuf);
	/* Reports are read and symbolicated SYM_BATCH at a time, then written in the order of the inputs.
	 * Measured on 10,000 reports × 100 frames (BENCHMARKS.md), when report_sym.c sorted the lookups of
	 * several reports together: 64 at a time cut the lookups' cache misses but cost more than that
	 * (the heap of 64 reports: 3.7-4.6 s CPU against 2.3-2.5 s one at a time, 8 at a time 2.3-2.9 s),
	 * so one report at a time it is (rs now keeps each address's answer for the whole batch). */
	enum { SYM_BATCH = 1 };
	tk_apple_report *bat[SYM_BATCH], *ok[SYM_BATCH];
	char *bat_err[SYM_BATCH];
	tk_apple_report_sym_stats bst[SYM_BATCH];
	for (size_t b0 = 0; b0 < nfiles; b0 += SYM_BATCH) {
		size_t bn = nfiles - b0 < SYM_BATCH ? nfiles - b0 : SYM_BATCH, nok = 0;
		for (size_t x = 0; x < bn; x++) {
			/* text: the .ips scanner reads frames and images without jansson's tree of them */
			unsigned fl =
			    (json ? 0 : TK_APPLE_REPORT_TEXT_ONLY) | (lazy[b0 + x] ? TK_APPLE_REPORT_IF_REPORT : 0);
			bat[x] = tk_apple_report_reader_read(rd, files[b0 + x], fl, &err);
			bat_err[x] = bat[x] ? NULL : tk_xstrdup(err.msg);
			if (bat[x])
				ok[nok++] = bat[x];
		}
		char *sym_err = NULL;
		for (size_t y = 0; y < nok && !sym_err; y++)
			if (tk_apple_report_symbolicate(ok[y], rs, &bst[y], &err) < 0)
				sym_err = tk_xstrdup(err.msg);
		for (size_t x = 0, y = 0; x < bn; x++) {
			size_t i = b0 + x;
			tk_apple_report *r = bat[x];
			if (!r) {
				if (bat_err[x][0]) {
					tk_cli_warn("symbolicate: %s", bat_err[x]);
					failed++;
				} else { /* found in a directory, not a report */
					skipped++;
				}
				free(bat_err[x]);
				continue;
			}
			tk_apple_report_sym_stats sst = bst[y++];
			if (sym_err) {
				tk_cli_warn("symbolicate: %s: %s", tk_cli_shown(files[i]), sym_err);
				tk_apple_report_free(r);
				failed++;
				continue;
			}
			char *dest =
			    to_dir ? out_name(out, files[i], r, json, &used) : (out && !to_stream ? strdup(out) : NULL);
			tk_outfile of = {0};
			int rc = tk_outfile_open(&of, dest, &err);
			of.nosync = to_dir; /* a batch: one syncfs at the end instead of an fsync per file */
			/* one write for most reports (stdio's default buffer makes it five for a 100-frame report) */
			if (rc == 0 && of.f != stdout && obuf)
				setvbuf(of.f, obuf, _IOFBF, 1 << 16);
			/* the text of an .ips or .crash is made in one buffer kept for the batch: a file gets it
			 * with one fwrite, the stream when STREAM_CHUNK bytes of reports are in it */
			int as_text = !json && (r->format == TK_APPLE_IPS || r->format == TK_APPLE_CRASH);
			if (rc == 0 && as_text) {
				if (!to_stream)
					tlen = 0;
				rc = tk_apple_report_text_append(r, &tbuf, &tlen, &tcap, &err);
				if (rc == 0 && !to_stream &&
				    ((tlen && fwrite(tbuf, 1, tlen, of.f) != tlen) || fflush(of.f) != 0 || ferror(of.f)))
					rc = tk_error_set(&err, "write error");
				if (rc == 0 && to_stream && tlen >= STREAM_CHUNK)
					rc = stream_out(tbuf, &tlen, &err);
			} else if (rc == 0) {
				if (to_stream && tlen) /* the reports before this one first */
					rc = stream_out(tbuf, &tlen, &err);
				if (rc == 0)
					rc = json ? tk_apple_report_write_ips(of.f, r, &err)
					          : tk_apple_report_write_text(of.f, r, &err);
			}
			if (rc == 0 &&
			    to_stream) { /* stdout stays open for the next report; its errors show at the end */
				if (ferror(stdout))
					rc = tk_error_set(&err, "standard output: write failed");
			} else if (rc == 0)
				rc = tk_outfile_commit(&of, &err);
			else if (!to_stream)
				tk_outfile_abort(&of);
			if (rc < 0) {
				tk_cli_warn("symbolicate: %s: %s", tk_cli_shown(dest ? dest : "stdout"), err.msg);
				failed++;
			} else {
				fprintf(
				    stderr,
				    "tracekit: symbolicate: %s: %zu frames resolved, %zu left as the report has them\n",
				    tk_cli_shown(files[i]), sst.resolved, sst.unresolved);
				if (to_dir && dest) {
					char *plain = out_name1(out, files[i], r, json, 0, 1);
					if (plain && strcmp(plain, dest))
						fprintf(stderr,
						        "tracekit: symbolicate: %s: written to %s (%s is another "
						        "report's)\n",
						        tk_cli_shown(files[i]), tk_cli_shown(dest),
						        tk_cli_shown(plain));
					free(plain);
				}
				for (size_t m = 0; m < r->nimages; m++)
					if (r->images[m].symbols < 0)
						fprintf(stderr,
						        "tracekit: symbolicate: %s:   unsymbolicated: %s (%s)\n",
						        tk_cli_shown(files[i]),
						        tk_cli_shown(r->images[m].name ? r->images[m].name : "???"),
						        tk_cli_shown(r->images[m].why));
				total_res += sst.resolved;
				total_unres += sst.unresolved;
			}
			free(dest);
			tk_apple_report_free(r);
		}
		free(sym_err);
	}
	tk_apple_report_symbols_free(rs);
	tk_apple_report_reader_free(rd);
	int stream_bad = 0;
	if (to_stream && tlen && stream_out(tbuf, &tlen, &err) < 0) {
		tk_cli_warn("symbolicate: standard output: %s", err.msg);
		stream_bad = 1;
	}
	free(tbuf);
	if (!stream_bad && to_stream && (fflush(stdout) != 0 || ferror(stdout))) {
		tk_cli_warn("symbolicate: standard output: write failed: %s", strerror(errno ? errno : EIO));
		stream_bad = 1;
	}
	free(obuf);
	for (size_t i = 0; i < used.n; i++)
		free(used.v[i]);
	free(used.v);
	tk_hidx_free(&used.idx);
	int sync_bad = 0;
	if (to_dir) {
		/* the outputs were renamed into place unsynced: make them durable before saying so */
		int dfd = open(out, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd < 0 || syncfs(dfd) != 0) {
			tk_cli_warn("symbolicate: %s: cannot sync the outputs: %s", tk_cli_shown(out), strerror(errno));
			sync_bad = 1;
		}
		if (dfd >= 0)
			close(dfd);
	}
	if (nfiles - skipped > 1)
		fprintf(stderr, "tracekit: symbolicate: %zu reports, %zu failed; %zu frames resolved, %zu left\n",
		        nfiles - skipped, (size_t)failed, total_res, total_unres);
	for (size_t i = 0; i < nfiles; i++)
		free(files[i]);
	free(files);
	free(lazy);
	if (nfiles == skipped)
		return tk_cli_fail("symbolicate: no reports found");
	return failed || sync_bad || stream_bad ? 1 : 0;
}

static int parse_hex(const char *s, uint64_t *v)
{
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	char *end;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 16);
	if (!*s || *end || errno)
		return -1;
	*v = x;
	return 0;
}

typedef struct sym_args {
	const char **ins, **paths;
	tk_image_spec *specs;
	char **spec_buf;
	int nin, npaths, nspecs, json;
	const char *in, *out;
	tk_symbol_options *so;
	tk_symbolicate_options *o;
} sym_args;

static int sym_option(void *ctx, const tk_cli_option *opt, const char *v, const char *spelling)
{
	sym_args *A = ctx;
	(void)spelling;
	switch (opt->id) {
	case OPT_INPUT:
		A->ins[A->nin++] = v;
		if (!A->in)
			A->in = v;
		return 0;
	case OPT_JSON: A->json = 1; return 0;
	case OPT_SYMBOLS: A->paths[A->npaths++] = v; return 0;
	case OPT_OUTPUT: A->out = v; return 0;
	case OPT_CACHE_DIR: A->so->cache_dir = v; return 0;
	case OPT_PAC_MASK:
		if (parse_hex(v, &A->o->pac_mask) < 0 || !A->o->pac_mask)
			return tk_cli_usage("symbolicate", "--pac-mask %s: expected a non-zero hex mask", v), -1;
		return 0;
	case OPT_ADJUST:
		if (!strcmp(v, "auto"))
			A->o->adjust = TK_ADJUST_AUTO;
		else if (!strcmp(v, "none"))
			A->o->adjust = TK_ADJUST_NONE;
		else if (!strcmp(v, "minus1"))
			A->o->adjust = TK_ADJUST_MINUS1;
		else
			return tk_cli_usage("symbolicate", "--adjust %s: expected auto, none or minus1", v), -1;
		return 0;
	case OPT_IMAGE: {
		char *sp = tk_xstrdup(v);
		char *at = strrchr(sp, '@');
		tk_image_spec *s = &A->specs[A->nspecs];
		memset(s, 0, sizeof *s);
		A->spec_buf[A->nspecs++] = sp;
		if (!at || parse_hex(at + 1, &s->load_addr) < 0)
			return tk_cli_usage("symbolicate", "--image %s: expected PATH|UUID[:ARCH]@LOADADDR", v), -1;
		*at = 0;
		char *colon = strrchr(sp, ':');
		if (colon && !strchr(colon, '/')) {
			*colon = 0;
			s->arch = colon + 1;
		}
		if (!strchr(sp, '/') && strlen(sp) >= 32 && strlen(sp) <= 36)
			s->uuid = sp;
		else
			s->path = sp;
		return 0;
	}
	}
	return 0;
}

int cmd_symbolicate(int argc, char **argv)
{
	const char *in = NULL, *out = NULL;
	const char *ins[argc];
	int nin = 0, json = 0;
	const char *paths[argc];
	int npaths = 0;
	tk_image_spec specs[argc];
	char *spec_buf[argc];
	int nspecs = 0, rc = 1;
	tk_symbol_options so;
	tk_symbol_options_init(&so);
	tk_symbolicate_options o;
	tk_symbolicate_options_init(&o);
	sym_args A = {.ins = ins, .paths = paths, .specs = specs, .spec_buf = spec_buf, .so = &so, .o = &o};
	int pr = tk_cli_parse(&tk_cli_command_symbolicate, argc, argv, 1, sym_option, &A, NULL);
	nin = A.nin, npaths = A.npaths, nspecs = A.nspecs, json = A.json, in = A.in, out = A.out;
	if (pr) {
		rc = pr < 0 ? 0 : pr;
		goto done;
	}
	if (!in) {
		rc = tk_cli_usage("symbolicate", "no input file");
		goto done;
	}
	if (!npaths && !nspecs) {
		rc = tk_cli_usage("symbolicate", "give --symbols PATH (dSYMs, binaries or a directory) or --image");
		goto done;
	}
	if (nin > 1 || json || is_report(in)) {
		tk_symbolicator *rs = tk_symbolicator_new(&so);
		tk_error e;
		rc = 0;
		for (int i = 0; i < npaths; i++)
			if (tk_symbolicator_add_path(rs, paths[i], &e) < 0) {
				rc = tk_cli_fail("symbolicate: %s", e.msg);
				break;
			}
		if (!rc)
			rc = symbolicate_reports(ins, (size_t)nin, out, json, rs);
		tk_symbolicator_free(rs);
		goto done;
	}
	tk_symbolicator *s = tk_symbolicator_new(&so);
	tk_error err;
	tk_profile *p = NULL, *q = NULL;
	tk_outfile of = {0};
	for (int i = 0; i < npaths; i++)
		if (tk_symbolicator_add_path(s, paths[i], &err) < 0) {
			rc = tk_cli_fail("symbolicate: %s", err.msg);
			goto out;
		}
	p = tk_profile_new();
	/* "the same export, symbolicated": keep every row's time, weight and order */
	tk_profile_keep_samples(p, 1);
	tk_read_options ro;
	tk_read_options_init(&ro);
	ro.progress = tk_cli_progress;
	int r = tk_read_path(p, in, &ro, &err);
	if (r == 0)
		r = tk_elf_name_session(&p, NULL, &err);
	tk_cli_progress_done();
	if (r < 0) {
		rc = tk_cli_fail("%s", err.msg);
		goto out;
	}
	size_t resolved = 0, unresolved = 0;
	o.images = specs;
	o.nimages = (size_t)nspecs;
	o.resolved = &resolved;
	o.unresolved = &unresolved;
	o.warn = warn_cb;
	q = tk_symbolicate_profile(p, s, &o, &err);
	if (!q) {
		rc = tk_cli_fail("symbolicate: %s", err.msg);
		goto out;
	}
	/* OUT may be IN: the output goes to a temporary beside OUT, renamed over it only when whole */
	if (tk_outfile_open(&of, out, &err) < 0) {
		rc = tk_cli_fail("symbolicate: %s", err.msg);
		goto out;
	}
	if (tk_symbol_write_xctrace(of.f, q, &err) < 0) {
		tk_outfile_abort(&of);
		rc = tk_cli_fail("symbolicate: %s: %s", out ? out : "stdout", err.msg);
		goto out;
	}
	if (tk_outfile_commit(&of, &err) < 0) {
		rc = tk_cli_fail("symbolicate: %s", err.msg);
		goto out;
	}
	fprintf(stderr, "tracekit: symbolicate: %zu frames resolved, %zu left as exported\n", resolved, unresolved);
	rc = 0;
out:
	tk_profile_free(q);
	tk_profile_free(p);
	tk_symbolicator_free(s);
done:
	for (int i = 0; i < nspecs; i++)
		free(spec_buf[i]);
	return rc;
}
