/* MetricKit reader: diagnostics become events with the shared attribute names (profile.h), metric
 * payloads a "metrics" marker with measurements and histograms; measurements are read exactly and
 * refused when they cannot be; histogram percentiles and the time above 250 ms against hand
 * computations. Run from the repository root (tests/run.sh does). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tracekit/metrickit.h"
#include "tracekit/read.h"
#include "tracekit/transform.h"

#define FIXD "tests/fixtures/metrickit/"

static tk_profile *load(const char *path)
{
	tk_profile *p = tk_profile_new();
	tk_error err = {{0}};
	int rc = tk_read_path(p, path, NULL, &err);
	if (rc < 0)
		fail_msg("%s", err.msg);
	return p;
}

static void test_measurements(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		int kind;
		uint64_t value;
	} good[] = {
	    {"4 sec", TK_MX_TIME, 4000000000ULL},        {"2.5 sec", TK_MX_TIME, 2500000000ULL},
	    {"20 ms", TK_MX_TIME, 20000000ULL},          {"20 secs.", TK_MX_TIME, 20000000000ULL},
	    {"20000 ms", TK_MX_TIME, 20000000000ULL},    {"1,800 sec", TK_MX_TIME, 1800000000000ULL},
	    {"1,000 MB", TK_MX_BYTES, 1000000000ULL},    {"2,000 byte", TK_MX_BYTES, 2000},
	    {"200,000 kB", TK_MX_BYTES, 200000000ULL},   {"1 KiB", TK_MX_BYTES, 1024},
	    {"12.5 ms per s", TK_MX_RATIO, 12500000ULL}, {"1,234,567 bytes", TK_MX_BYTES, 1234567},
	    {"0.001 sec", TK_MX_TIME, 1000000},          {"3", TK_MX_COUNT, 3},
	};
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		tk_mx_value v;
		if (tk_mx_measurement(good[i].text, strlen(good[i].text), &v) < 0)
			fail_msg("'%s' refused", good[i].text);
		assert_int_equal(v.kind, good[i].kind);
		assert_int_equal(v.value, good[i].value);
	}
	static const char *const bad[] = {"",
	                                  "sec",
	                                  "abc sec",
	                                  "4 parsecs",
	                                  "1,00 MB",
	                                  "1,0000 MB",
	                                  "1.5 ns",
	                                  ",100 ms",
	                                  "99999999999999999999 sec",
	                                  "4 sec extra",
	                                  "-4 sec",
	                                  "1..5 s",
	                                  "20000000000000000 sec"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		tk_mx_value v;
		if (tk_mx_measurement(bad[i], strlen(bad[i]), &v) == 0)
			fail_msg("'%s' accepted as %d %llu", bad[i], v.kind, (unsigned long long)v.value);
	}
}

static void test_histograms(void **state)
{
	(void)state;
	/* hand computation (the generated metric payload's hang-time histogram):
	 *   buckets [0,100] ms ×6, [100,400] ×3, [400,700] ×2, [1000,2000] ×1; N = 12
	 *   P50: rank 6 falls in bucket 1 at its end: 100 ms
	 *   P90: rank 10.8: after 6 + 3 = 9, bucket [400,700] holds 2: 400 + 300 × 1.8/2 = 670 ms
	 *   time in hangs ≥ 250 ms: [100,400] half above (1.5 hangs at (250+400)/2 = 325 ms) = 487.5 ms,
	 *   [400,700] 2 × 550 = 1100 ms, [1000,2000] 1 × 1500 = 1500 ms: 3087.5 ms */
	tk_mx_bucket b[] = {
	    {0, 100000000, 6}, {100000000, 400000000, 3}, {400000000, 700000000, 2}, {1000000000, 2000000000, 1}};
	assert_true(fabs(tk_mx_histogram_quantile(b, 4, 0.5) - 100e6) < 1);
	assert_true(fabs(tk_mx_histogram_quantile(b, 4, 0.9) - 670e6) < 1);
	assert_true(fabs(tk_mx_histogram_quantile(b, 4, 1.0) - 2000e6) < 1);
	assert_true(fabs(tk_mx_histogram_sum_above(b, 4, 250000000) - 3087.5e6) < 1);
	assert_true(isnan(tk_mx_histogram_quantile(b, 0, 0.5)));
	char *s = tk_mx_histogram_format(b, 4, TK_MX_TIME);
	assert_string_equal(s, "ns;0,100000000,6;100000000,400000000,3;400000000,700000000,2;1000000000,2000000000,1");
	tk_mx_bucket *back;
	size_t n;
	tk_mx_kind k;
	assert_int_equal(tk_mx_histogram_parse(s, &back, &n, &k), 0);
	assert_int_equal(n, 4);
	assert_int_equal(k, TK_MX_TIME);
	assert_memory_equal(back, b, sizeof b);
	free(back);
	free(s);
	static const char *const bad[] = {"", "ms;1,2,3", "ns;1,2", "ns;2,1,1", "ns;1,2,3;", "ns;a,b,c"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		assert_int_equal(tk_mx_histogram_parse(bad[i], &back, &n, &k), -1);
		assert_null(back);
	}
}

static const tk_event *find_kind(const tk_profile *p, tk_event_kind kind, tk_event_id *id)
{
	for (tk_event_id e = 1; e <= tk_event_count(p); e++)
		if (tk_event_get(p, e)->kind == kind) {
			*id = e;
			return tk_event_get(p, e);
		}
	fail_msg("no %s event", tk_event_kind_name(kind));
	return NULL;
}

static void test_diagnostics(void **state)
{
	(void)state;
	tk_profile *p = load(FIXD "meter_xcode_simulated_macOS_13.json");
	assert_int_equal(tk_event_count(p), 5);
	/* in the payload's key order */
	static const tk_event_kind order[] = {TK_EVENT_DISK_WRITE, TK_EVENT_HANG, TK_EVENT_CRASH,
	                                      TK_EVENT_CPU_EXCEPTION, TK_EVENT_LAUNCH};
	for (tk_event_id e = 1; e <= 5; e++) {
		const tk_event *ev = tk_event_get(p, e);
		assert_int_equal(ev->kind, order[e - 1]);
		assert_int_equal(ev->samples, 20);
		assert_int_equal(ev->weight, 20);
		/* 2022-09-28 10:59:30 with no zone: read as UTC */
		assert_true(ev->wall == 1664362770.0);
		assert_true(tk_event_num(p, e, "payload.end") == 1664362770.0);
		assert_string_equal(tk_event_str(p, e, "bundle"), "com.chimehq.Edit");
		assert_string_equal(tk_event_str(p, e, "device"), "MacBookPro18,3");
		assert_string_equal(tk_event_str(p, e, "os"), "macOS 13.0 (22A5358e)");
		assert_string_equal(tk_event_str(p, e, "arch"), "arm64e");
		assert_string_equal(tk_event_str(p, e, "region"), "CA");
		assert_string_equal(tk_event_str(p, e, "app.version"), "");
		assert_int_not_equal(ev->thread, TK_NO_THREAD);
		const tk_thread *t = tk_thread_get(p, ev->thread);
		assert_int_equal(t->event, e);
	}
	tk_event_id e;
	const tk_event *h = find_kind(p, TK_EVENT_HANG, &e);
	assert_int_equal(h->duration, 20000000000ULL);
	assert_true(tk_event_num(p, e, "hang.duration") == 20.0);
	assert_int_equal(tk_thread_get(p, h->thread)->role, TK_ROLE_ATTRIBUTED);
	const tk_event *d = find_kind(p, TK_EVENT_DISK_WRITE, &e);
	assert_true(tk_event_num(p, e, "disk.writes") == 2000.0);
	assert_int_equal(tk_thread_get(p, d->thread)->role, TK_ROLE_OWNED);
	const tk_event *c = find_kind(p, TK_EVENT_CPU_EXCEPTION, &e);
	assert_true(tk_event_num(p, e, "cpu.time") == 20.0);
	assert_true(tk_event_num(p, e, "sampled.time") == 20.0);
	assert_int_equal(c->duration, 20000000000ULL);
	find_kind(p, TK_EVENT_LAUNCH, &e);
	assert_true(tk_event_num(p, e, "launch.duration") == 20.0);
	find_kind(p, TK_EVENT_CRASH, &e);
	assert_true(tk_event_num(p, e, "signal") == 11.0);
	assert_true(tk_event_num(p, e, "exception.type") == 1.0);
	assert_true(tk_event_num(p, e, "exception.code") == 0.0);
	assert_string_equal(tk_event_str(p, e, "termination.reason"), "Namespace SIGNAL, Code 0xb");
	assert_non_null(tk_event_str(p, e, "vm.region"));
	assert_string_equal(tk_profile_meta(p, "format"), "metrickit");
	assert_string_equal(tk_profile_meta(p, "diagnostics"), "5");
	tk_profile_free(p);

	/* "+0000" zones; a real crash's frames (iOS 14 form): every frame's binary has the UUID, and the
	 * frame's address is its offset into the image (load address 0), small as offsets are */
	p = load(FIXD "meter_real_report.json");
	assert_int_equal(tk_event_count(p), 2);
	assert_true(tk_event_get(p, 1)->wall == 1602302400.0); /* 2020-10-10 04:00:00 +0000 */
	assert_true(tk_event_num(p, 1, "payload.end") == 1602388740.0);
	for (size_t f = 1; f <= tk_frame_count(p); f++) {
		const tk_binary *b = tk_binary_get(p, tk_frame_get(p, (tk_frame_id)f)->binary);
		assert_non_null(b);
		assert_int_not_equal(b->uuid, 0);
		assert_int_equal(b->load_addr, 0);
		assert_true(tk_frame_get(p, (tk_frame_id)f)->addr < (1ULL << 32));
	}
	tk_profile_free(p);
}

static void test_metric_payload(void **state)
{
	(void)state;
	tk_profile *p = load(FIXD "generated_metric_payload.json");
	assert_int_equal(tk_event_count(p), 1);
	const tk_event *ev = tk_event_get(p, 1);
	assert_int_equal(ev->kind, TK_EVENT_MARKER);
	assert_string_equal(tk_string(p, ev->name), "metrics");
	assert_int_equal(ev->duration, 86340000000000ULL); /* 23:59 */
	assert_true(ev->wall == 1709251200.0);
	assert_string_equal(tk_event_str(p, 1, "app.version"), "2.1");
	assert_string_equal(tk_event_str(p, 1, "app.build"), "214");
	assert_string_equal(tk_event_str(p, 1, "device"), "iPhone15,2");
	assert_string_equal(tk_event_str(p, 1, "os"), "iPhone OS 17.3.1 (21D61)");
	assert_string_equal(tk_event_str(p, 1, "bundle"), "com.example.atlas");
	assert_true(tk_event_num(p, 1, "pid") == 4242);
	assert_true(tk_event_num(p, 1, "foreground.time") == 1800.0);
	assert_true(tk_event_num(p, 1, "background.time") == 240.0);
	assert_true(tk_event_num(p, 1, "background.location.time") == 30.0);
	assert_true(tk_event_num(p, 1, "cpu.time") == 100.5);
	assert_true(tk_event_num(p, 1, "memory.peak") == 200e6);
	assert_true(tk_event_num(p, 1, "scroll.hitch.ratio") == 0.0125);
	assert_string_equal(tk_event_str(p, 1, "histogram.app.hang.time"),
	                    "ns;0,100000000,6;100000000,400000000,3;400000000,700000000,2;1000000000,2000000000,1");
	assert_string_equal(tk_event_str(p, 1, "histogram.time.to.first.draw"),
	                    "ns;1000000000,1010000000,30;2000000000,2010000000,10");
	assert_string_equal(tk_event_str(p, 1, "histogram.application.resume.time"), "ns;200000000,210000000,20");
	/* kept as given: what tracekit has no name for */
	assert_string_equal(tk_event_str(p, 1, "mx.memoryMetrics.averageSuspendedMemory"), "100,000 kB");
	assert_string_equal(tk_event_str(p, 1, "mx.cpuMetrics.cumulativeCPUInstructions"), "100 kiloinstructions");
	assert_string_equal(tk_event_str(p, 1, "mx.someFutureMetrics.newThing"), "3 widgets");
	assert_int_equal(tk_profile_samples(p), 0);
	tk_profile_free(p);
}

static void test_errors(void **state)
{
	(void)state;
	static const struct {
		const char *json, *want;
	} cases[] = {
	    {"{\"hangDiagnostics\":[{\"diagnosticMetaData\":{\"hangDuration\":\"soon\"}}]}",
	     "m.json:1:59: payload 1: hangDiagnostics[0].diagnosticMetaData.hangDuration: cannot read \"soon\" as a "
	     "duration such as 4 sec, 2.5 sec or 20 ms"},
	    {"{\"hangDiagnostics\":[{\"diagnosticMetaData\":{\"hangDuration\":4}}]}",
	     "hangDiagnostics[0].diagnosticMetaData.hangDuration: expected a duration such as 4 sec, 2.5 sec or 20 ms "
	     "as a string"},
	    {"{\"timeStampBegin\":\"yesterday\",\"crashDiagnostics\":[]}", "timeStampBegin: cannot read \"yesterday\""},
	    {"{\"callStacks\":[{\"callStackRootFrames\":[{\"sampleCount\":1,\"subFrames\":[{\"sampleCount\":2}]}]}]}",
	     "callStackTree.callStacks[0].callStackRootFrames[0].sampleCount: 1 is less than its subFrames' total 2"},
	    {"{\"callStacks\":[{\"callStackRootFrames\":[{\"sampleCount\":-1}]}]}",
	     "callStackRootFrames[0].sampleCount: expected a whole number"},
	    {"{\"callStacks\":[{\"callStackRootFrames\":[{\"sampleCount\":1,\"subFrames\":{}}]}]}",
	     "callStackRootFrames[0].subFrames: expected an array of frames"},
	    {"{\"callStacks\":[{\"callStackRootFrames\":[{\"sampleCount\":1,\"binaryName\":\"a\xff\"}]}]}",
	     "binaryName: invalid UTF-8 in a string"},
	    {"{\"callStacks\":[{\"callStackRootFrames\":[{\"sampleCount\":1,\"binaryName\":\"\\u0000\"}]}]}",
	     "\\u0000 in a string"},
	    {"{\"crashDiagnostics\":[{\"diagnosticMetaData\":{\"signal\":1}}]}{\"crashDiagnostics\":[", "cut short"},
	    {"[{\"crashDiagnostics\":[]}", "not closed"},
	    {"{\"crashDiagnostics\":[]}}", "expected a MetricKit payload"},
	    {"{\"crashDiagnostics\":[{\"callStackTree\":{\"callStackPerThread\":1}}]}",
	     "callStackTree.callStackPerThread: expected true or false"},
	    {"{\"hangDiagnostics\":[{\"diagnosticMetaData\":{\"x\":tru}}]}", "expected a JSON value"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		tk_profile *p = tk_profile_new();
		tk_error err = {{0}};
		tk_input *in = tk_input_open_mem(cases[i].json, strlen(cases[i].json), "m.json", &err);
		assert_non_null(in);
		int rc = tk_read_input(p, in, NULL, &err);
		tk_input_close(in);
		if (rc == 0 || !strstr(err.msg, cases[i].want) || strchr(err.msg, '\n'))
			fail_msg("case %zu: rc %d, '%s' (wanted '%s')", i, rc, err.msg, cases[i].want);
		tk_profile_free(p);
	}
	/* unknown keys everywhere are skipped; a missing UUID is no error */
	const char *ok =
	    "{\"x\":{\"y\":[1,2.5e3,null,true]},\"hangDiagnostics\":[{\"new\":[{}],\"callStackTree\":{\"z\":1,"
	    "\"callStacks\":[{\"w\":\"\\ud83d\\ude00\",\"callStackRootFrames\":[{\"sampleCount\":3,\"q\":{},"
	    "\"binaryName\":\"B\",\"offsetIntoBinaryTextSegment\":16}]}]}}]}";
	tk_profile *p = tk_profile_new();
	tk_error err = {{0}};
	tk_input *in = tk_input_open_mem(ok, strlen(ok), "ok.json", &err);
	assert_int_equal(tk_read_input(p, in, NULL, &err), 0);
	tk_input_close(in);
	assert_int_equal(tk_profile_samples(p), 3);
	char buf[32];
	assert_string_equal(tk_frame_label(p, 1, buf), "B + 0x10");
	tk_profile_free(p);
}

/* Transforms carry events: --kind keeps the selected diagnostics with their attributes, thread roles
 * and weights; other transforms keep every event. */
static void test_transform_events(void **state)
{
	(void)state;
	tk_profile *p = load(FIXD "meter_xcode_simulated_macOS_13.json");
	tk_transform_spec k = {TK_TX_EVENT_KIND, "hang"};
	tk_error err = {{0}};
	tk_profile *q = tk_transform(p, &k, 1, &err);
	assert_non_null(q);
	assert_int_equal(tk_event_count(q), 1);
	const tk_event *e = tk_event_get(q, 1);
	assert_int_equal(e->kind, TK_EVENT_HANG);
	assert_int_equal(e->weight, 20);
	assert_int_equal(e->duration, 20000000000ULL);
	assert_true(tk_event_num(q, 1, "hang.duration") == 20.0);
	assert_int_equal(tk_thread_count(q), 1);
	assert_int_equal(tk_thread_get(q, e->thread)->role, TK_ROLE_ATTRIBUTED);
	tk_profile_free(q);
	tk_transform_spec m = {TK_TX_MERGE_SYSTEM, NULL};
	q = tk_transform(p, &m, 1, &err);
	assert_int_equal(tk_event_count(q), 5);
	for (tk_event_id i = 1; i <= 5; i++)
		assert_int_equal(tk_event_get(q, i)->weight, 20);
	tk_profile_free(q);
	tk_transform_spec bad = {TK_TX_EVENT, "6"};
	assert_null(tk_transform(p, &bad, 1, &err));
	assert_non_null(strstr(err.msg, "the input has 5 events"));
	tk_profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_measurements), cmocka_unit_test(test_histograms),
	    cmocka_unit_test(test_diagnostics),  cmocka_unit_test(test_metric_payload),
	    cmocka_unit_test(test_errors),       cmocka_unit_test(test_transform_events),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
