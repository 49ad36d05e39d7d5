/*
 * The reader registry: sniff the first bytes of the (decompressed) input and hand the stream to
 * the reader that recognises them. Adding a format is one entry in `readers` below.
 */
#include <string.h>
#include <sys/stat.h>

#include "read/lines.h"
#include "tracekit/metrickit.h"
#include "tracekit/read.h"
#include "read/records.h"
#include "tracekit/apple_report.h"
#include "util/mem.h"

static const tk_reader *const readers[] = {
    /* Order matters only when two sniffers could both accept; the binary formats (whose magic is
     * unambiguous) go first, text formats last. */
    /* ---- READERS: add tk_reader_records here ---- */
    &tk_reader_records,
    /* Apple reports (tracekit/apple_report.h): anchored on an ips header line or a report's first lines */
    &tk_reader_ips,
    &tk_reader_crash,
    &tk_reader_spindump,
    /* MetricKit JSON: a '{' or '[' with one of its own keys in the head */
    &tk_reader_metrickit,
    /* The text formats' sniffers are anchored on their first lines, so they go before xctrace's
     * (which looks for `<?xml` anywhere in the head); folded stacks, the loosest, go last. */
    &tk_reader_deepcopy,
    &tk_reader_sample,
    &tk_reader_perf,
    &tk_reader_simpleperf,
    &tk_reader_dtrace,
    &tk_reader_xctrace,
    &tk_reader_folded,
};

void tk_read_options_init(tk_read_options *o)
{
	memset(o, 0, sizeof *o);
	o->time_from = 0;
	o->time_to = UINT64_MAX;
}

const tk_reader *tk_reader_find(const unsigned char *head, size_t n)
{
	for (size_t i = 0; i < sizeof readers / sizeof readers[0]; i++)
		if (readers[i]->sniff(head, n))
			return readers[i];
	return NULL;
}

const tk_reader *tk_reader_at(size_t i)
{
	return i < sizeof readers / sizeof readers[0] ? readers[i] : NULL;
}

/* Weights that sum past 2^64 would wrap into wrong totals: refuse them (the model drops the
 * sample that would overflow and says so). */
static int check_weight(const tk_profile *p, const char *name, int rc, tk_error *err)
{
	if (rc == 0 && tk_profile_weight_overflow(p))
		return tk_error_set(err, "%s: the weights add up to more than 2^64 - 1 %s; totals would be wrong", name,
		                    tk_unit_name(tk_profile_unit(p)));
	return rc;
}

/* Memory that runs out while reading (a hostile or huge input) becomes this input's error. */
typedef struct guarded_read {
	const tk_reader *r;
	tk_profile *p;
	tk_input *in;
	const char *path;
	const tk_read_options *o;
	tk_error *err;
} guarded_read;

static int run_reader(void *ctx)
{
	guarded_read *g = ctx;
	return g->r->read(g->p, g->in, g->o, g->err);
}

static int oom_error(int rc, const char *name, size_t bytes, tk_error *err)
{
	if (rc == TK_OOM)
		return tk_error_set(err, "%s: out of memory (%zu bytes) while reading", name, bytes);
	return rc;
}

static int has(const unsigned char *h, size_t n, const char *lit)
{
	return memmem(h, n, lit, strlen(lit)) != NULL;
}

static int starts_with(const unsigned char *h, size_t n, const char *lit)
{
	size_t l = strlen(lit);
	return n >= l && memcmp(h, lit, l) == 0;
}

/* Formats people feed tracekit that it does not read: say what the file is and what to do, rather
 * than "unrecognised". Only asked when no reader accepted the input. */
static const char *known_unread(const unsigned char *h, size_t n)
{
	size_t i = 0;
	while (i < n && (h[i] == ' ' || h[i] == '\t' || h[i] == '\r' || h[i] == '\n'))
		i++;
	const unsigned char *t = h + i;
	size_t tn = n - i;
	if (starts_with(h, n, "PERFILE2") || starts_with(h, n, "PERFFILE"))
		return "a `perf record` data file (perf.data), which tracekit does not read: convert it with "
		       "`perf script -i FILE > FILE.txt` and read that";
	if (starts_with(t, tn, "# To display the perf.data header") ||
	    (has(h, n, "# Samples: ") && has(h, n, "# Overhead")))
		return "`perf report` output (percentages, not samples), which tracekit does not read: use `perf "
		       "script` "
		       "instead";
	if (starts_with(h, n,
	                "\x7f"
	                "ELF") ||
	    starts_with(h, n, "\xcf\xfa\xed\xfe") || starts_with(h, n, "\xca\xfe\xba\xbe"))
		return "an executable or library (ELF / Mach-O), not a profile: give it to --symbols to name a "
		       "profile's "
		       "frames";
	if (starts_with(h, n, "PK\x03\x04"))
		return "a zip archive (an Instruments .trace zipped, perhaps?), which tracekit does not read: unzip it "
		       "and "
		       "use `xcrun xctrace export`, or read the export";
	if (tn && (t[0] == '{' || t[0] == '[')) {
		if (has(h, n, "speedscope"))
			return "speedscope JSON, which tracekit writes but does not read";
		if (has(h, n, "\"traceEvents\"") || has(h, n, "\"ph\":"))
			return "a Chrome trace-event JSON file, which tracekit does not read";
		if (has(h, n, "\"nodes\"") && has(h, n, "\"callFrame\""))
			return "a V8/Chrome .cpuprofile JSON file, which tracekit does not read";
		if (has(h, n, "\"meta\"") && (has(h, n, "\"threads\"") || has(h, n, "\"processes\"")))
			return "a Firefox Profiler (Gecko) JSON profile, which tracekit writes but does not read";
		return "a JSON document that is not a profile tracekit reads (of JSON it reads MetricKit payloads and "
		       ".ips reports)";
	}
	if (starts_with(t, tn, "<svg") || (starts_with(t, tn, "<?xml") && has(h, n, "<svg")))
		return "an SVG image (a rendered flame graph?): tracekit reads the folded stacks it was drawn from, "
		       "not the "
		       "picture";
	if (starts_with(t, tn, "<!DOCTYPE html") || starts_with(t, tn, "<!doctype html") || starts_with(t, tn, "<html"))
		return "an HTML page, which tracekit does not read";
	if (has(h, n, "# callgrind format") || starts_with(t, tn, "events:") ||
	    (has(h, n, "\ncmd:") && has(h, n, "\nevents:")))
		return "a callgrind profile (valgrind), which tracekit does not read";
	return NULL;
}

int tk_read_input(tk_profile *p, tk_input *in, const tk_read_options *o, tk_error *err)
{
	tk_read_options defaults;
	if (!o) {
		tk_read_options_init(&defaults);
		o = &defaults;
	}
	size_t n;
	const unsigned char *head = tk_input_head(in, &n);
	if (n == 0)
		return tk_error_set(err, "%s: empty input", tk_input_name(in));
	/* A byte-order mark: the sniffers see the text as UTF-8 (the line reader decodes the rest). */
	size_t bom;
	int enc = tk_text_bom(head, n, &bom);
	unsigned char decoded[TK_INPUT_HEAD * 3 / 2];
	if (enc != TK_TEXT_UTF8) {
		n = tk_text_head_utf8(head + bom, n - bom, enc, decoded, sizeof decoded);
		head = decoded;
	} else
		head += bom, n -= bom;
	const tk_reader *r = n ? tk_reader_find(head, n) : NULL;
	if (!r)
		r = o->fallback;
	if (!r && n) {
		const char *what = known_unread(head, n);
		if (what)
			return tk_error_set(err, "%s: %s", tk_input_name(in), what);
	}
	if (r && enc != TK_TEXT_UTF8 && (r == &tk_reader_xctrace || r == &tk_reader_records))
		return tk_error_set(err, "%s: %s input in UTF-16: export it again as UTF-8", tk_input_name(in),
		                    r->name);
	if (!r) {
		/* the first line, printable ASCII only, so the user sees what was looked at */
		char first[48];
		size_t k = 0, i = 0;
		for (; i < n && head[i] != '\n' && k < sizeof first - 4; i++)
			first[k++] = head[i] >= 0x20 && head[i] < 0x7f ? (char)head[i] : '?';
		if (i < n && head[i] != '\n')
			memcpy(first + k, "...", 3), k += 3;
		first[k] = 0;
		return tk_error_set(
		    err,
		    "%s: unrecognised input format (expected an `xctrace export` XML document, Records, "
		    "Instruments Deep Copy, macOS `sample`, `perf script`, simpleperf, DTrace, MetricKit JSON, an Apple "
		    "report or folded stacks%s; the first line is "
		    "\"%s\")",
		    tk_input_name(in), tk_input_is_gzip(in) ? " inside the gzip stream" : "", first);
	}
	size_t bytes = 0;
	int rc = oom_error(tk_oom_run(run_reader, &(guarded_read){r, p, in, NULL, o, err}, &bytes), tk_input_name(in),
	                   bytes, err);
	if (rc == 0 && o->run && !tk_profile_meta(p, "differential"))
		return tk_error_set(err,
		                    "%s: --run %u: only differential folded stacks (`STACK BEFORE AFTER`) hold two "
		                    "runs; this is %s input",
		                    tk_input_name(in), o->run, r->name);
	return check_weight(p, tk_input_name(in), rc, err);
}

static int read_path(tk_profile *p, const char *path, const tk_read_options *o, tk_error *err)
{
	/* A directory is a monitor session (tracekit monitor's records + images.json, or MTHawkeye's
	 * records.mtlog/.mmap2 + dyld-images): not one stream, so it bypasses the sniffers. */
	struct stat st;
	if (strcmp(path, "-") != 0 && stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return check_weight(p, path, tk_records_read_with(p, path, o, err), err);
	tk_input *in = tk_input_open(path, err);
	if (!in)
		return -1;
	int rc = tk_read_input(p, in, o, err);
	tk_input_close(in);
	return rc;
}

static int run_path(void *ctx)
{
	guarded_read *g = ctx;
	return read_path(g->p, g->path, g->o, g->err);
}

int tk_read_path(tk_profile *p, const char *path, const tk_read_options *o, tk_error *err)
{
	/* The input layer's own buffers (and a session directory's reading) run under a guard too. */
	size_t bytes = 0;
	int rc = tk_oom_run(run_path, &(guarded_read){NULL, p, NULL, path, o, err}, &bytes);
	return oom_error(rc, path, bytes, err);
}
