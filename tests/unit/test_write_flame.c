/* The SVG flame graph API (tk_write_flamegraph): frames, exact weights, escaping, default colours by
 * binary, the caller's colour and tooltip callbacks (differential flame graphs), the frame budget. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "test_calltree_helpers.h"
#include "tracekit/write.h"

static char *flame(const tk_calltree *t, const tk_flame_options *o)
{
	char *s = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&s, &n);
	assert_int_equal(tk_write_flamegraph(f, t, o, NULL), 0);
	fclose(f);
	return s;
}

/* The <g class="f" …> element whose title starts with label, or NULL. */
static const char *frame_of(const char *svg, const char *label)
{
	char key[256];
	snprintf(key, sizeof key, "<title>%s\n", label);
	const char *t = strstr(svg, key);
	if (!t)
		return NULL;
	while (t > svg && strncmp(t, "<g class=\"f\"", 12) != 0)
		t--;
	return t;
}

static unsigned fill_of(const char *g)
{
	const char *f = strstr(g, "fill=\"#");
	assert_non_null(f);
	return (unsigned)strtoul(f + 7, NULL, 16);
}

static size_t count(const char *s, const char *needle)
{
	size_t n = 0;
	for (const char *p = strstr(s, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

static tk_profile *sample(void)
{
	tk_profile *p = tk_profile_new();
	tk_thread_id t = th_thread(p, 1, 10, "Main Thread", "App");
	th_add(p, t, "App`main;App`work", 1000, 6);
	th_add(p, t, "App`main;/usr/lib/system/libsystem_kernel.dylib`read", 1000, 3);
	th_add(p, t, "App`main;0x1f", 1000, 1);
	th_add(p, t, "App`main;App`a<b&\"c'd>", 1000, 2);
	return p;
}

static void test_frames_and_weights(void **state)
{
	tk_profile *p = sample();
	tk_calltree_options co;
	tk_calltree_options_init(&co);
	tk_calltree *t = tk_calltree_build(p, &co, NULL);
	char *svg = flame(t, NULL);
	assert_non_null(strstr(svg, "<svg xmlns=\"http://www.w3.org/2000/svg\""));
	assert_non_null(strstr(svg, "data-total=\"12000\""));
	assert_int_equal(count(svg, "\n<g class=\"f\""), 6); /* root, main, work, read, 0x1f, a<b… */
	const char *work = frame_of(svg, "work");
	assert_non_null(work);
	assert_non_null(strstr(work, "data-d=\"2\" data-w=\"6000\""));
	assert_non_null(strstr(work, "total 0.01 ms (50.00% of thread), self 0.01 ms, 6 samples"));
	/* Escaped wherever it appears; the raw name never does. */
	assert_non_null(frame_of(svg, "a&lt;b&amp;&quot;c&apos;d&gt;"));
	assert_null(strstr(svg, "a<b"));
	/* Default colours: the app warm (red high, blue low), system cool (blue high), no binary grey. */
	unsigned app = fill_of(work), sys = fill_of(frame_of(svg, "read")), none = fill_of(frame_of(svg, "0x1f"));
	assert_true((app >> 16) >= 205 && (app & 0xff) <= 55);
	assert_true((sys & 0xff) >= 200 && (sys >> 16) < 130);
	assert_true((none >> 16) == ((none >> 8) & 0xff) && (none >> 16) == (none & 0xff));
	free(svg);
	tk_calltree_free(t);
	tk_profile_free(p);
}

static uint32_t red_work(void *ctx, const tk_calltree *t, const tk_cnode *n)
{
	char buf[32];
	(*(int *)ctx)++;
	return strcmp(tk_cnode_label(t, n, buf), "work") == 0 ? 0xff0000 : TK_FLAME_DEFAULT_COLOR;
}

static void note_work(void *ctx, const tk_calltree *t, const tk_cnode *n, char *buf, size_t cap)
{
	char lb[32];
	if (strcmp(tk_cnode_label(t, n, lb), "work") == 0)
		snprintf(buf, cap, "+2.00 ms vs A <grew>");
}

static void test_callbacks(void **state)
{
	tk_profile *p = sample();
	tk_calltree_options co;
	tk_calltree_options_init(&co);
	tk_calltree *t = tk_calltree_build(p, &co, NULL);
	int calls = 0;
	tk_flame_options o;
	tk_flame_options_init(&o);
	o.color = red_work;
	o.note = note_work;
	o.ctx = &calls;
	o.title = "diff & more";
	o.icicle = 1;
	char *svg = flame(t, &o);
	assert_int_equal(calls, 6);
	assert_int_equal(fill_of(frame_of(svg, "work")), 0xff0000);
	assert_int_equal(count(svg, "fill=\"#ff0000\""), 1);
	assert_non_null(strstr(frame_of(svg, "work"), "\n+2.00 ms vs A &lt;grew&gt;</title>"));
	assert_non_null(strstr(svg, ">diff &amp; more</text>"));
	/* Icicle: the root is above its children. */
	const char *root = strstr(svg, "data-d=\"0\""), *main = strstr(svg, "data-d=\"1\"");
	double yr = strtod(strstr(root, " y=\"") + 4, NULL), ym = strtod(strstr(main, " y=\"") + 4, NULL);
	assert_true(yr < ym);
	free(svg);
	tk_calltree_free(t);
	tk_profile_free(p);
}

static void test_budget(void **state)
{
	/* One heavy path and 50 light siblings: a budget of 10 frames keeps the heaviest ones. */
	tk_profile *p = tk_profile_new();
	tk_thread_id t = th_thread(p, 1, 10, "T", "App");
	th_add(p, t, "App`main;App`heavy;App`deeper", 1000000, 10);
	char spec[64];
	for (int i = 0; i < 50; i++) {
		snprintf(spec, sizeof spec, "App`main;App`light%02d", i);
		th_add(p, t, spec, 1000 + (uint64_t)i, 1);
	}
	tk_calltree_options co;
	tk_calltree_options_init(&co);
	tk_calltree *tr = tk_calltree_build(p, &co, NULL);
	tk_flame_options o;
	tk_flame_options_init(&o);
	o.max_frames = 10;
	char *svg = flame(tr, &o);
	assert_int_equal(count(svg, "\n<g class=\"f\""), 10);
	assert_non_null(frame_of(svg, "deeper"));
	assert_non_null(frame_of(svg, "light49")); /* the heaviest light ones stay */
	assert_null(frame_of(svg, "light00"));
	assert_non_null(strstr(svg, "44 frames under"));
	free(svg);
	o.max_frames = 0;
	o.min_width = 0.5; /* light frames are ~0.12 px wide of 1180 */
	svg = flame(tr, &o);
	assert_int_equal(count(svg, "\n<g class=\"f\""), 4);
	free(svg);
	tk_calltree_free(tr);
	tk_profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_frames_and_weights),
	    cmocka_unit_test(test_callbacks),
	    cmocka_unit_test(test_budget),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
