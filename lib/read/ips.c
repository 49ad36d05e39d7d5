/*
 * `.ips` reports in JSON (iOS 15+, macOS 12+): a header line (bug_type, app_name, app_version,
 * build_version, bundleID, os_version, incident_id, timestamp …), then the body: procName, pid,
 * modelCode, cpuType, osVersion, exception {type, signal, codes, subtype}, termination, faultingThread,
 * threads[] {id, name, queue, triggered, threadState, frames[] {imageIndex, imageOffset, symbol,
 * symbolLocation, sourceFile, sourceLine}}, usedImages[] {uuid, base, size, arch, name, path}.
 * A frame's address is usedImages[imageIndex].base + imageOffset. Verified kinds: docs/apple-reports.md.
 *
 * Register values in threadState are full 64-bit numbers that jansson refuses ("too big integer");
 * they are turned into marked strings before parsing (see bigint_pass) and read back exactly.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "read/apple_report_int.h"
#include "util/mem.h"

/* Integers of 19 or more digits become the string "\x1e" "BIG:" DIGITS (the writer turns them back
 * into numbers). Strings are skipped with their escapes; nothing else changes. */
#define BIG_MARK                                                                                                       \
	"\x1e"                                                                                                         \
	"BIG:"
static char *bigint_pass(const char *s, size_t n, size_t *out_n)
{
	size_t big = 0;
	int in_str = 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (in_str) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_str = 0;
		} else if (c == '"')
			in_str = 1;
		else if ((c >= '0' && c <= '9') || c == '-') {
			size_t j = i + (c == '-');
			size_t d = j;
			while (d < n && s[d] >= '0' && s[d] <= '9')
				d++;
			if (d - j >= 19 && (d >= n || (s[d] != '.' && s[d] != 'e' && s[d] != 'E')))
				big++;
			i = d - 1;
		}
	}
	if (!big)
		return NULL;
	char *o = tk_xmalloc(n + big * 12 + 1);
	size_t k = 0;
	in_str = 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (in_str) {
			o[k++] = c;
			if (c == '\\' && i + 1 < n)
				o[k++] = s[++i];
			else if (c == '"')
				in_str = 0;
		} else if (c == '"') {
			in_str = 1;
			o[k++] = c;
		} else if ((c >= '0' && c <= '9') || c == '-') {
			size_t j = i + (c == '-');
			size_t d = j;
			while (d < n && s[d] >= '0' && s[d] <= '9')
				d++;
			int mark = d - j >= 19 && (d >= n || (s[d] != '.' && s[d] != 'e' && s[d] != 'E'));
			if (mark) {
				memcpy(o + k, "\"\\u001eBIG:", 11); /* JSON strings hold no raw controls */
				k += 11;
			}
			memcpy(o + k, s + i, d - i);
			k += d - i;
			if (mark)
				o[k++] = '"';
			i = d - 1;
		} else
			o[k++] = c;
	}
	o[k] = 0;
	*out_n = k;
	return o;
}

/* A number as the report writes it: a JSON integer, or a marked big one. -1 if neither. */
static int get_u64(json_t *v, uint64_t *out, int *negative)
{
	*negative = 0;
	if (json_is_integer(v)) {
		json_int_t x = json_integer_value(v);
		*negative = x < 0;
		*out = (uint64_t)x;
		return 0;
	}
	if (json_is_string(v) && !strncmp(json_string_value(v), BIG_MARK, 5)) {
		const char *d = json_string_value(v) + 5;
		*negative = *d == '-';
		char *end;
		*out = *negative ? (uint64_t)strtoll(d, &end, 10) : strtoull(d, &end, 10);
		return *end ? -1 : 0;
	}
	return -1;
}

static char *str_dup(json_t *v)
{
	return json_is_string(v) ? tk_xstrndup(json_string_value(v), json_string_length(v)) : NULL;
}

static void attr(tk_apple_report *r, const char *key, json_t *v)
{
	if (json_is_string(v))
		tk_apple_report_set_attr(r, key, json_string_value(v), json_string_length(v));
	else if (json_is_integer(v)) {
		char b[32];
		snprintf(b, sizeof b, "%lld", (long long)json_integer_value(v));
		tk_apple_report_set_attr(r, key, b, strlen(b));
	}
}

static tk_event_kind kind_of(const char *bug_type, json_t *body)
{
	if (!bug_type)
		return json_object_get(body, "exception") ? TK_EVENT_CRASH : TK_EVENT_HANG;
	if (!strcmp(bug_type, "309") || !strcmp(bug_type, "109") || !strcmp(bug_type, "385"))
		return TK_EVENT_CRASH;
	if (!strcmp(bug_type, "202") || !strcmp(bug_type, "142"))
		return TK_EVENT_CPU_EXCEPTION;
	if (!strcmp(bug_type, "145"))
		return TK_EVENT_DISK_WRITE;
	if (json_object_get(body, "exception") || json_object_get(body, "faultingThread"))
		return TK_EVENT_CRASH;
	return TK_EVENT_HANG;
}

static int frames_of(tk_apple_report *r, json_t *frames, tk_apple_report_thread *t, const char *where, tk_error *err)
{
	size_t k;
	json_t *f;
	json_array_foreach(frames, k, f)
	{
		if (!json_is_object(f))
			return tk_error_set(err, "%s: %s[%zu] is not an object", r->name, where, k);
		tk_apple_report_frame *fr = tk_apple_report_add_frame(t);
		uint64_t idx = 0, off = 0;
		int neg;
		json_t *ji = json_object_get(f, "imageIndex"), *jo = json_object_get(f, "imageOffset");
		if (ji) {
			if (get_u64(ji, &idx, &neg) < 0 || neg)
				return tk_error_set(err, "%s: %s[%zu].imageIndex is not a non-negative integer",
				                    r->name, where, k);
			if (idx >= r->nimages)
				return tk_error_set(err, "%s: %s[%zu].imageIndex %llu is out of range (%zu usedImages)",
				                    r->name, where, k, (unsigned long long)idx, r->nimages);
			fr->image = (uint32_t)idx + 1;
		}
		if (jo) {
			if (get_u64(jo, &off, &neg) < 0 || neg)
				return tk_error_set(err, "%s: %s[%zu].imageOffset is not a non-negative integer",
				                    r->name, where, k);
		}
		fr->addr = (fr->image ? r->images[fr->image - 1].base : 0) + off;
		fr->symbol = str_dup(json_object_get(f, "symbol"));
		json_t *sl = json_object_get(f, "symbolLocation");
		if (sl && get_u64(sl, &fr->symoff, &neg) == 0 && !neg)
			fr->has_symoff = 1;
		fr->file = str_dup(json_object_get(f, "sourceFile"));
		json_t *ln = json_object_get(f, "sourceLine");
		if (json_is_integer(ln) && json_integer_value(ln) > 0 && json_integer_value(ln) < UINT32_MAX)
			fr->line = (uint32_t)json_integer_value(ln);
	}
	return 0;
}

int tk_apple_report_parse_ips(tk_apple_report *r, char *buf, size_t n, size_t body, tk_error *err)
{
	if (!r->json_header)
		return tk_error_set(err, "%s:1: an .ips report starts with its JSON header line", r->name);
	size_t bn = n - body, hn = 0;
	char *big = bigint_pass(buf + body, bn, &hn);
	json_error_t je;
	json_t *b = json_loadb(big ? big : buf + body, big ? hn : bn, 0, &je);
	free(big);
	if (!b)
		return tk_error_set(
		    err, "%s:%d:%d: the report body (the JSON after the header line) %s: %s", r->name, je.line + 1,
		    je.column, je.position >= (int)(big ? hn : bn) - 1 ? "is cut short" : "is not valid JSON", je.text);
	r->json_body = b;
	if (!json_is_object(b))
		return tk_error_set(err, "%s:2: the report body is not a JSON object", r->name);
	r->kind = kind_of(r->bug_type, b);
	r->event_name = tk_xstrdup(r->kind == TK_EVENT_CRASH ? "crash" : tk_event_kind_name(r->kind));

	/* attributes: the header's first (tk_apple_report_header_attrs), completed from the body */
	if (!tk_apple_report_attr(r, "app"))
		attr(r, "app", json_object_get(b, "procName"));
	json_t *bi = json_object_get(b, "bundleInfo");
	if (!tk_apple_report_attr(r, "app.version"))
		attr(r, "app.version", json_object_get(bi, "CFBundleShortVersionString"));
	if (!tk_apple_report_attr(r, "app.build"))
		attr(r, "app.build", json_object_get(bi, "CFBundleVersion"));
	if (!tk_apple_report_attr(r, "bundle"))
		attr(r, "bundle", json_object_get(bi, "CFBundleIdentifier"));
	attr(r, "device", json_object_get(b, "modelCode"));
	json_t *ov = json_object_get(b, "osVersion");
	if (!tk_apple_report_attr(r, "os") && json_is_object(ov)) {
		json_t *train = json_object_get(ov, "train"), *build = json_object_get(ov, "build");
		if (json_is_string(train)) {
			char o[256];
			snprintf(o, sizeof o, "%s%s%s%s", json_string_value(train),
			         json_string_length(build) ? " (" : "",
			         json_string_length(build) ? json_string_value(build) : "",
			         json_string_length(build) ? ")" : "");
			tk_apple_report_set_attr(r, "os", o, strlen(o));
		}
	}
	json_t *ct = json_object_get(b, "cpuType");
	if (json_is_string(ct)) {
		const char *a = tk_apple_report_arch_name(json_string_value(ct), json_string_length(ct));
		if (a)
			tk_apple_report_set_attr(r, "arch", a, strlen(a));
	}
	attr(r, "process", json_object_get(b, "procName"));
	attr(r, "pid", json_object_get(b, "pid"));
	if (!tk_apple_report_attr(r, "incident"))
		attr(r, "incident", json_object_get(b, "incident"));
	json_t *ex = json_object_get(b, "exception");
	if (json_is_object(ex)) {
		attr(r, "exception.type", json_object_get(ex, "type"));
		attr(r, "exception.code", json_object_get(ex, "codes"));
		attr(r, "signal", json_object_get(ex, "signal"));
	}
	json_t *tm = json_object_get(b, "termination");
	if (json_is_object(tm)) {
		json_t *ns = json_object_get(tm, "namespace"), *code = json_object_get(tm, "code"),
		       *ind = json_object_get(tm, "indicator");
		char o[512];
		int l = snprintf(o, sizeof o, "Namespace %s, Code %lld%s%s",
		                 json_is_string(ns) ? json_string_value(ns) : "?",
		                 json_is_integer(code) ? (long long)json_integer_value(code) : 0LL,
		                 json_is_string(ind) ? " " : "", json_is_string(ind) ? json_string_value(ind) : "");
		if (json_is_string(ns) && l > 0)
			tk_apple_report_set_attr(r, "termination.reason", o, strlen(o));
	}
	json_t *ct2 = json_object_get(b, "captureTime");
	if (json_is_string(ct2)) {
		double w = tk_apple_report_parse_time(json_string_value(ct2), json_string_length(ct2));
		if (w == w)
			r->wall = w;
	}

	json_t *imgs = json_object_get(b, "usedImages");
	if (imgs && !json_is_array(imgs))
		return tk_error_set(err, "%s: usedImages is not an array", r->name);
	size_t i;
	json_t *v;
	json_array_foreach(imgs, i, v)
	{
		if (!json_is_object(v))
			return tk_error_set(err, "%s: usedImages[%zu] is not an object", r->name, i);
		tk_apple_report_image *im = tk_apple_report_add_image(r);
		int neg;
		json_t *base = json_object_get(v, "base"), *size = json_object_get(v, "size");
		if ((base && (get_u64(base, &im->base, &neg) < 0 || neg)) ||
		    (size && (get_u64(size, &im->size, &neg) < 0 || neg)))
			return tk_error_set(err, "%s: usedImages[%zu]: base and size must be non-negative integers",
			                    r->name, i);
		json_t *u = json_object_get(v, "uuid");
		if (json_is_string(u)) {
			im->uuid = tk_apple_report_uuid(json_string_value(u), json_string_length(u));
			if (im->uuid && !strcmp(im->uuid, "00000000-0000-0000-0000-000000000000")) {
				free(im->uuid);
				im->uuid = NULL;
			}
		}
		im->name = str_dup(json_object_get(v, "name"));
		im->path = str_dup(json_object_get(v, "path"));
		im->arch = str_dup(json_object_get(v, "arch"));
		if (!im->name && im->path) {
			const char *sl = strrchr(im->path, '/');
			im->name = tk_xstrdup(sl ? sl + 1 : im->path);
		}
	}
	json_t *threads = json_object_get(b, "threads");
	if (threads && !json_is_array(threads))
		return tk_error_set(err, "%s: threads is not an array", r->name);
	json_t *fault = json_object_get(b, "faultingThread");
	json_array_foreach(threads, i, v)
	{
		if (!json_is_object(v))
			return tk_error_set(err, "%s: threads[%zu] is not an object", r->name, i);
		tk_apple_report_thread *t = tk_apple_report_add_thread(r);
		t->json_index = i;
		uint64_t id = i;
		int neg;
		json_t *jid = json_object_get(v, "id");
		if (jid && get_u64(jid, &id, &neg) < 0)
			id = i;
		t->id = id;
		t->name = str_dup(json_object_get(v, "name"));
		t->queue = str_dup(json_object_get(v, "queue"));
		t->crashed = json_is_true(json_object_get(v, "triggered")) ||
		             (json_is_integer(fault) && (size_t)json_integer_value(fault) == i);
		json_t *frames = json_object_get(v, "frames");
		if (frames && !json_is_array(frames))
			return tk_error_set(err, "%s: threads[%zu].frames is not an array", r->name, i);
		char where[48];
		snprintf(where, sizeof where, "threads[%zu].frames", i);
		if (frames_of(r, frames, t, where, err) < 0)
			return -1;
	}
	json_t *leb = json_object_get(b, "lastExceptionBacktrace");
	if (json_is_array(leb)) {
		r->leb = tk_xcalloc(1, sizeof *r->leb);
		if (frames_of(r, leb, r->leb, "lastExceptionBacktrace", err) < 0)
			return -1;
	}
	if (!r->nthreads)
		return tk_error_set(
		    err, "%s: the report has no threads[] with frames (bug_type %s is not one tracekit reads)", r->name,
		    r->bug_type ? r->bug_type : "?");
	return 0;
}

static int sniff(const unsigned char *h, size_t n)
{
	return tk_apple_report_sniff(h, n) == TK_APPLE_IPS;
}

static int read_ips(tk_profile *p, tk_input *in, const tk_read_options *o, tk_error *err)
{
	(void)o;
	return tk_apple_report_read_profile(p, in, err);
}

const tk_reader tk_reader_ips = {"ips", sniff, read_ips};
