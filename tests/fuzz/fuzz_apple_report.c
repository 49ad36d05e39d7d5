/* libFuzzer harness for one of Apple's report formats (built once per format: fuzz_report_ips,
 * fuzz_report_crash, fuzz_report_spindump). Any bytes must give a report or a one-line tk_error
 * naming the input, never a crash, hang or sanitizer report; whatever reads must also go into a
 * profile and through the writers (text, and JSON for .ips) without one. Inputs that do not start
 * like the format get its first line prepended, so the fuzzer reaches the parser with any body.
 * For .ips, a differential check: the report is read again with TK_APPLE_REPORT_TEXT_ONLY (the
 * scanner of lib/read/ips.c) and must give the same answer: the same error message, or the same
 * threads, frames, images and attributes, and the same text, byte for byte. Every target also holds
 * the plain-JSON builder that reads header lines and .ips bodies without jansson's lexer
 * (tk_apple_report_json_strict) to jansson: over the whole input and over its first line, whatever
 * it builds must be what json_loadb builds (the same keys in the same order, the same values). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "read/apple_report_int.h"
#include "tracekit/apple_report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#if defined(TK_FUZZ_FORMAT_ips)
static const char prefix[] = "{\"bug_type\":\"309\",\"incident_id\":\"F\"}\n";
static const tk_apple_report_format want = TK_APPLE_IPS;
#elif defined(TK_FUZZ_FORMAT_crash)
static const char prefix[] = "Incident Identifier: F\nException Type:  EXC_CRASH (SIGABRT)\n";
static const tk_apple_report_format want = TK_APPLE_CRASH;
#else
static const char prefix[] = "Date/Time:        2026-01-01 00:00:00.000 +0000\nEvent:            hang\n";
static const tk_apple_report_format want = TK_APPLE_SPINDUMP;
#endif

static int str_ne(const char *a, const char *b)
{
	return (!a != !b) || (a && strcmp(a, b));
}

static void same_thread(const tk_apple_report_thread *a, const tk_apple_report_thread *b)
{
	if (!a != !b)
		abort();
	if (!a)
		return;
	if (a->id != b->id || str_ne(a->name, b->name) || str_ne(a->queue, b->queue) || a->crashed != b->crashed ||
	    a->json_index != b->json_index || a->nframes != b->nframes)
		abort();
	for (size_t k = 0; k < a->nframes; k++) {
		const tk_apple_report_frame *x = &a->frames[k], *y = &b->frames[k];
		if (x->image != y->image || x->addr != y->addr || str_ne(x->symbol, y->symbol) ||
		    x->symoff != y->symoff || x->has_symoff != y->has_symoff || str_ne(x->file, y->file) ||
		    x->line != y->line || x->count != y->count || x->line_no != y->line_no)
			abort();
	}
}

/* The scanner's report (b) is the jansson path's (a). */
static void same_report(const tk_apple_report *a, const tk_apple_report *b)
{
	if (a->format != b->format || a->kind != b->kind || str_ne(a->event_name, b->event_name) ||
	    str_ne(a->bug_type, b->bug_type) || a->nattr != b->nattr || a->nthreads != b->nthreads ||
	    a->nimages != b->nimages || memcmp(&a->wall, &b->wall, sizeof a->wall))
		abort();
	for (size_t i = 0; i < 2 * a->nattr; i++)
		if (str_ne(a->attr[i], b->attr[i]))
			abort();
	for (size_t i = 0; i < a->nthreads; i++)
		same_thread(&a->threads[i], &b->threads[i]);
	same_thread(a->leb, b->leb);
	for (size_t i = 0; i < a->nimages; i++) {
		const tk_apple_report_image *x = &a->images[i], *y = &b->images[i];
		if (x->base != y->base || x->size != y->size || str_ne(x->name, y->name) || str_ne(x->path, y->path) ||
		    str_ne(x->uuid, y->uuid) || str_ne(x->arch, y->arch))
			abort();
	}
}

static char *text_of(const tk_apple_report *r, size_t *n)
{
	char *out = NULL;
	tk_error err;
	FILE *f = open_memstream(&out, n);
	tk_apple_report_write_text(f, r, &err);
	fclose(f);
	return out;
}

static void differential(const uint8_t *buf, size_t n, const tk_apple_report *r, const tk_error *err)
{
	tk_error e2;
	tk_input *in = tk_input_open_mem(buf, n, "fuzz", &e2);
	if (!in)
		abort();
	tk_apple_report *s = tk_apple_report_read_ex(in, TK_APPLE_REPORT_TEXT_ONLY, &e2);
	tk_input_close(in);
	if (!r != !s || (!r && strcmp(err->msg, e2.msg)))
		abort();
	if (!r)
		return;
	same_report(r, s);
	/* the scanner's tree is jansson's with every threads[].frames and usedImages emptied */
	if (s->json_partial) {
		json_t *want = json_deep_copy(r->json_body), *th = json_object_get(want, "threads");
		size_t i;
		json_t *t;
		json_array_foreach(th, i, t)
		{
			if (json_object_get(t, "frames"))
				json_object_set_new(t, "frames", json_array());
		}
		if (json_object_get(want, "usedImages"))
			json_object_set_new(want, "usedImages", json_array());
		if (!json_equal(want, s->json_body))
			abort();
		json_decref(want);
	}
	size_t an, bn;
	char *a = text_of(r, &an), *b = text_of(s, &bn);
	if (an != bn || memcmp(a, b, an))
		abort();
	free(a);
	free(b);
	tk_apple_report_free(s);
}

/* tk_apple_report_json_strict(s) = json_loadb(s), when the first gives anything */
static void strict_is_jansson(const char *s, size_t n)
{
	json_t *a = tk_apple_report_json_strict(s, n);
	if (!a)
		return;
	json_error_t je;
	json_t *b = json_loadb(s, n, 0, &je);
	if (!b || !json_equal(a, b))
		abort();
	char *x = json_dumps(a, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY),
	     *y = json_dumps(b, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
	if (!x || !y || strcmp(x, y))
		abort();
	free(x);
	free(y);
	json_decref(a);
	json_decref(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	strict_is_jansson((const char *)data, size);
	const uint8_t *nl = memchr(data, '\n', size);
	if (nl)
		strict_is_jansson((const char *)data, (size_t)(nl - data));
	size_t pl = strlen(prefix);
	uint8_t *buf = malloc(size + pl + 1);
	memcpy(buf, data, size);
	size_t n = size;
	if (tk_apple_report_sniff(data, size < 4096 ? size : 4096) != want) {
		memcpy(buf, prefix, pl);
		memcpy(buf + pl, data, size);
		n = size + pl;
	}
	tk_error err;
	tk_input *in = tk_input_open_mem(buf, n, "fuzz", &err);
	if (!in) {
		free(buf);
		return 0;
	}
	tk_apple_report *r = tk_apple_report_read(in, &err);
	tk_input_close(in);
	if (want == TK_APPLE_IPS)
		differential(buf, n, r, &err);
	if (!r) {
		if (strchr(err.msg, '\n') || strncmp(err.msg, "fuzz", 4) != 0)
			abort(); /* errors are one line naming the input */
		free(buf);
		return 0;
	}
	tk_profile *p = tk_profile_new();
	if (tk_apple_report_to_profile(r, p, &err) < 0)
		abort();
	tk_profile_free(p);
	char *out = NULL;
	size_t on = 0;
	FILE *f = open_memstream(&out, &on);
	tk_apple_report_write_text(f, r, &err);
	if (r->format == TK_APPLE_IPS)
		tk_apple_report_write_ips(f, r, &err);
	fclose(f);
	free(out);
	tk_apple_report_free(r);
	free(buf);
	return 0;
}
