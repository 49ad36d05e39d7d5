/*
 * The format table behind `tracekit convert`. The folded and JSON entries adapt the writers that
 * predate the table (they take their own options or a call tree); newer writers take
 * tk_convert_options directly.
 */
#include <string.h>

#include "tracekit/calltree.h"
#include "tracekit/write.h"

void tk_convert_options_init(tk_convert_options *o)
{
	memset(o, 0, sizeof *o);
}

static int write_folded(FILE *out, const tk_profile *p, const tk_convert_options *o, tk_error *err)
{
	tk_folded_options fo = {.no_thread = o->merge_threads};
	return tk_write_folded(out, p, &fo, err);
}

static int write_tree_json(FILE *out, const tk_profile *p, const tk_convert_options *o, tk_error *err)
{
	tk_calltree_options co;
	tk_calltree_options_init(&co);
	if (o->merge_threads)
		co.group = TK_GROUP_ALL;
	co.invert = o->inverted;
	tk_calltree *t = tk_calltree_build(p, &co, err);
	if (!t)
		return -1;
	int rc = tk_write_tree_json(out, t, err);
	tk_calltree_free(t);
	return rc;
}

int tk_write_speedscope(FILE *out, const tk_profile *p, const tk_convert_options *o, tk_error *err);
int tk_write_pprof(FILE *out, const tk_profile *p, const tk_convert_options *o, tk_error *err);
int tk_write_svg(FILE *out, const tk_profile *p, const tk_convert_options *o, tk_error *err);

static const tk_writer writers[] = {
    {"gecko", ".gecko.json .fxprof.json", "Firefox Profiler (processed format with per-sample weights)", 0,
     tk_write_gecko},
    {"speedscope", ".speedscope.json .speedscope", "speedscope JSON (speedscope.app, offline: npm speedscope)", 0,
     tk_write_speedscope},
    {"pprof", ".pb.gz .pprof .pb", "pprof profile.proto, gzip'd (go tool pprof, speedscope)", 1, tk_write_pprof},
    {"svg", ".svg", "interactive SVG flame graph (any browser, offline)", 0, tk_write_svg},
    {"folded", ".folded .collapsed .txt", "folded stacks (FlameGraph, inferno, speedscope import)", 0, write_folded},
    {"json", ".json", "tracekit's call-tree JSON (docs/json-tree.md)", 0, write_tree_json},
};

const tk_writer *tk_writers(size_t *n)
{
	*n = sizeof writers / sizeof writers[0];
	return writers;
}

const tk_writer *tk_writer_find(const char *name)
{
	for (size_t i = 0; i < sizeof writers / sizeof writers[0]; i++)
		if (strcmp(writers[i].name, name) == 0)
			return &writers[i];
	return NULL;
}

/* The longest matching extension wins, so ".speedscope.json" beats ".json". */
const tk_writer *tk_writer_for_path(const char *path)
{
	const tk_writer *best = NULL;
	size_t best_len = 0, plen = strlen(path);
	for (size_t i = 0; i < sizeof writers / sizeof writers[0]; i++) {
		const char *e = writers[i].extensions;
		while (e && *e) {
			const char *sp = strchr(e, ' ');
			size_t len = sp ? (size_t)(sp - e) : strlen(e);
			if (len > best_len && len <= plen && strncasecmp(path + plen - len, e, len) == 0) {
				best = &writers[i];
				best_len = len;
			}
			e = sp ? sp + 1 : NULL;
		}
	}
	return best;
}
