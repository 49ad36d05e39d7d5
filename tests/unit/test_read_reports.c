/* Apple's reports as profiles: one event per report with the shared attribute names, the threads'
 * roles, weights (1 per crash-report thread, sample counts for spindump) and the sniffers. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tracekit/apple_report.h"
#include "tracekit/read.h"

#define PAIR "tests/fixtures/reports/multithread-test_macos13_lldb"

static tk_profile *read_file(const char *path)
{
	tk_profile *p = tk_profile_new();
	tk_error err;
	int rc = tk_read_path(p, path, NULL, &err);
	if (rc)
		fail_msg("%s", err.msg);
	return p;
}

static tk_profile *read_mem(const char *text, const char *name, tk_error *err, int *rc)
{
	tk_profile *p = tk_profile_new();
	tk_input *in = tk_input_open_mem(text, strlen(text), name, err);
	assert_non_null(in);
	*rc = tk_read_input(p, in, NULL, err);
	tk_input_close(in);
	return p;
}

static void ips_event(void **st)
{
	(void)st;
	tk_profile *p = read_file(PAIR ".ips");
	assert_int_equal(tk_event_count(p), 1);
	const tk_event *e = tk_event_get(p, 1);
	assert_int_equal(e->kind, TK_EVENT_CRASH);
	assert_string_equal(tk_string(p, e->key), "5A0D8938-189E-4FD5-8C9F-02BD2C045BAF");
	assert_string_equal(tk_event_str(p, 1, "incident"), "5A0D8938-189E-4FD5-8C9F-02BD2C045BAF");
	assert_string_equal(tk_event_str(p, 1, "app"), "multithread-test");
	assert_string_equal(tk_event_str(p, 1, "os"), "macOS 13.0");
	assert_string_equal(tk_event_str(p, 1, "device"), "MacBookPro18,2");
	assert_string_equal(tk_event_str(p, 1, "arch"), "arm64");
	assert_string_equal(tk_event_str(p, 1, "process"), "multithread-test");
	assert_string_equal(tk_event_str(p, 1, "pid"), "22511");
	assert_string_equal(tk_event_str(p, 1, "exception.type"), "EXC_BAD_ACCESS");
	assert_string_equal(tk_event_str(p, 1, "exception.code"), "0x0000000000000001, 0x0000000000000000");
	assert_string_equal(tk_event_str(p, 1, "signal"), "SIGSEGV");
	assert_string_equal(tk_event_str(p, 1, "termination.reason"),
	                    "Namespace SIGNAL, Code 11 Segmentation fault: 11");
	assert_string_equal(tk_event_str(p, 1, "bug_type"), "309");
	/* 2022-07-28 11:10:19.4194 -0700 = 18:10:19.4194 UTC */
	assert_true(fabs(e->wall - 1659031819.4194) < 1e-3);
	/* every thread holds one sample of the event; the crashed one is the thread it is about */
	assert_int_equal(e->weight, 3);
	assert_int_equal(tk_thread_count(p), 3);
	int attributed = 0, owned = 0;
	for (size_t i = 0; i < tk_thread_count(p); i++) {
		const tk_thread *t = tk_thread_get(p, (tk_thread_id)i);
		assert_int_equal(t->weight, 1);
		assert_int_equal(t->event, 1);
		if (t->role == TK_ROLE_ATTRIBUTED) {
			attributed++;
			assert_int_equal(t->tid, 2344961);
			assert_int_equal(e->thread, i);
		} else if (t->role == TK_ROLE_OWNED)
			owned++;
	}
	assert_int_equal(attributed, 1);
	assert_int_equal(owned, 2);
	/* frames: address = base + imageOffset, binary with UUID and load address, the report's names */
	size_t nb = tk_binary_count(p);
	int found = 0;
	for (size_t f = 1; f <= tk_frame_count(p); f++) {
		const tk_frame *fr = tk_frame_get(p, (tk_frame_id)f);
		if (fr->addr == 4310450176ull + 6388) {
			found = 1;
			assert_string_equal(tk_string(p, fr->name), "bar(int)");
			assert_string_equal(tk_string(p, fr->file), "multithread-test.cpp");
			assert_int_equal(fr->line, 7);
			assert_true(fr->flags & TK_FRAME_LEAF_PC);
			const tk_binary *b = tk_binary_get(p, fr->binary);
			assert_string_equal(tk_string(p, b->uuid), "AB9B94F9-6CDF-3B8E-B140-FAE3CB13D327");
			assert_int_equal(b->load_addr, 4310450176ull);
		}
	}
	assert_true(found);
	assert_true(nb >= 6);
	tk_profile_free(p);
}

static void crash_text_event(void **st)
{
	(void)st;
	tk_profile *p = read_file(PAIR ".crash");
	assert_int_equal(tk_event_count(p), 1);
	const tk_event *e = tk_event_get(p, 1);
	assert_int_equal(e->kind, TK_EVENT_CRASH);
	assert_string_equal(tk_event_str(p, 1, "exception.type"), "EXC_BAD_ACCESS");
	assert_string_equal(tk_event_str(p, 1, "signal"), "SIGSEGV");
	assert_string_equal(tk_event_str(p, 1, "pid"), "22511");
	assert_string_equal(tk_event_str(p, 1, "arch"), "arm64");
	assert_string_equal(tk_event_str(p, 1, "termination.reason"),
	                    "Namespace SIGNAL, Code 11 Segmentation fault: 11");
	assert_int_equal(e->weight, 3);
	const tk_thread *t = tk_thread_get(p, e->thread);
	assert_int_equal(t->tid, 2);
	tk_profile_free(p);
}

/* A microstackshot as iOS writes it for a CPU limit (bug_type 202 header line, then the text), the
 * layout of docs/apple-reports.md. */
static const char cpu_report[] =
    "{\"bug_type\":\"202\",\"app_name\":\"TKApp\",\"app_version\":\"2.1\",\"build_version\":\"77\","
    "\"incident_id\":\"C0FFEE00-1111-2222-3333-444455556666\",\"os_version\":\"iPhone OS 17.2 (21C62)\"}\n"
    "Date/Time:        2026-11-20 10:00:00.000 +0000\n"
    "OS Version:       iPhone OS 17.2 (Build 21C62)\n"
    "Architecture:     arm64e\n"
    "Report Version:   35.1\n"
    "Data Source:      Microstackshots\n"
    "\n"
    "Command:          TKApp\n"
    "PID:              912\n"
    "\n"
    "Event:            cpu usage\n"
    "Action taken:     none\n"
    "Duration:         118.00s\n"
    "Steps:            20\n"
    "\n"
    "Heaviest stack for the target process:\n"
    "  7  ??? (TKApp + 100) [0x100004064]\n"
    "\n"
    "Powerstats for:   TKApp [912]\n"
    "UUID:             4C4C4430-5555-3144-A158-50296743BBBA\n"
    "Num samples:      10 (50%)\n"
    "  10  ??? (TKApp + 100) [0x100004064]\n"
    "    7  ??? (TKApp + 200) [0x1000040c8]\n"
    "      7  ??? (libsystem_kernel.dylib + 12) [0x18000000c]\n"
    "    2  ??? (TKApp + 300) [0x10000412c]\n"
    "\n"
    "  Binary Images:\n"
    "           0x100004000 -        0x100007fff  TKApp 2.1 (77)   <4C4C4430-5555-3144-A158-50296743BBBA>  /var/TKApp\n"
    "           0x180000000 -        0x18003ffff  libsystem_kernel.dylib <D3BAC787-09EE-3319-BE24-4115817391E2>  "
    "/usr/lib/system/libsystem_kernel.dylib\n";

static void microstackshot_event(void **st)
{
	(void)st;
	tk_error err;
	int rc;
	tk_profile *p = read_mem(cpu_report, "cpu.ips", &err, &rc);
	if (rc)
		fail_msg("%s", err.msg);
	assert_string_equal(tk_profile_meta(p, "format"), "spindump");
	const tk_event *e = tk_event_get(p, 1);
	assert_non_null(e);
	assert_int_equal(e->kind, TK_EVENT_CPU_EXCEPTION);
	assert_string_equal(tk_string(p, e->name), "cpu usage");
	assert_int_equal(e->duration, 118000000000ull);
	assert_string_equal(tk_event_str(p, 1, "incident"), "C0FFEE00-1111-2222-3333-444455556666");
	assert_string_equal(tk_event_str(p, 1, "app.version"), "2.1");
	assert_string_equal(tk_event_str(p, 1, "app.build"), "77");
	assert_string_equal(tk_event_str(p, 1, "pid"), "912");
	/* self counts: 10 - 7 - 2 = 1 at the root, 7 at the kernel leaf, 2 at the other child */
	assert_int_equal(e->weight, 10);
	assert_int_equal(tk_profile_weight(p), 10);
	size_t n;
	const tk_stack_weight *sw = tk_thread_stacks(p, 0, &n);
	uint64_t by_depth[4] = {0};
	for (size_t i = 0; i < n; i++)
		by_depth[tk_stack_depth(p, sw[i].stack)] += sw[i].weight;
	assert_int_equal(by_depth[1], 1);
	assert_int_equal(by_depth[2], 2);
	assert_int_equal(by_depth[3], 7);
	/* the frame named by image + offset gets that image (the Binary Images come after the stacks) */
	int found = 0;
	for (size_t f = 1; f <= tk_frame_count(p); f++) {
		const tk_frame *fr = tk_frame_get(p, (tk_frame_id)f);
		if (fr->addr == 0x1000040c8) {
			found = 1;
			assert_string_equal(tk_string(p, tk_binary_get(p, fr->binary)->name), "TKApp");
		}
	}
	assert_true(found);
	tk_profile_free(p);
}

static void sniffers(void **st)
{
	(void)st;
	const char *crash = "Incident Identifier: X\nProcess: A [1]\nException Type:  EXC_CRASH (SIGABRT)\n";
	const char *spin = "Date/Time:        2023\nEvent:            hang\n";
	const char *ips = "{\"bug_type\":\"309\"}\n{\"threads\":[]}\n";
	assert_int_equal(tk_apple_report_sniff((const unsigned char *)crash, strlen(crash)), TK_APPLE_CRASH);
	assert_int_equal(tk_apple_report_sniff((const unsigned char *)spin, strlen(spin)), TK_APPLE_SPINDUMP);
	assert_int_equal(tk_apple_report_sniff((const unsigned char *)ips, strlen(ips)), TK_APPLE_IPS);
	const char *json = "{\"a\":1}\n{\"b\":2}\n";
	assert_int_equal(tk_apple_report_sniff((const unsigned char *)json, strlen(json)), 0);
	const char *sample = "Analysis of sampling rg (pid 1) every 1 millisecond\nProcess: rg [1]\n";
	assert_int_equal(tk_apple_report_sniff((const unsigned char *)sample, strlen(sample)), 0);
	/* an ips with no threads is refused with the file named */
	tk_error err;
	int rc;
	tk_profile *p = read_mem(ips, "empty.ips", &err, &rc);
	assert_int_equal(rc, -1);
	assert_non_null(strstr(err.msg, "empty.ips: the report has no threads[]"));
	tk_profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(ips_event),
	    cmocka_unit_test(crash_text_event),
	    cmocka_unit_test(microstackshot_event),
	    cmocka_unit_test(sniffers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
