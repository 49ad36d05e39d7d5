/*
 * Interactive SVG flame graphs. See include/tracekit/write.h (tk_write_flamegraph).
 *
 * The document is plain SVG that shows the graph without scripts (so image viewers and GitHub show
 * it) plus one inline script for click-to-zoom, search and details; it loads nothing from the
 * network. Frames are emitted in depth-first pre-order inside one <g class="sec"> per group, each
 * with its depth (data-d) and total weight (data-w), so the script finds a frame's subtree (the
 * following frames that are deeper) and its ancestors without comparing floating-point pixels,
 * and the matched percentage is summed from exact weights.
 *
 * Groups (threads) are drawn to one scale: the heaviest at the full width, each other as wide as
 * its weight is next to it, so a 1 ms thread does not look as wide as a 55 ms one. A frame's hover
 * line gives its share of its group ("of thread"); the matched share of a search is of the whole
 * file, or of the zoomed frame while one is zoomed (as FlameGraph rescales it), and says which.
 *
 * Size is bounded twice: frames narrower than min_width are left out (at any depth the visible
 * frames of a group share its width, so at most width / min_width per depth), and when more than
 * max_frames frames remain the width is raised until max_frames are left, so the file stays at a
 * few MB (about 230 bytes per frame) whatever the input's size.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tracekit/transform.h"
#include "tracekit/write.h"
#include "util/mem.h"
#include "util/text.h"
#include "write/wutil.h"

#define FRAME_H 16  /* pixels per depth level */
#define PAD 10      /* left and right margin */
#define CHAR_W 7.2  /* monospace 12px, for label truncation */
#define SEC_HEAD 20 /* a group's heading line */
#define SEC_GAP 10  /* between groups */
#define TOP 56      /* title, subtitle and buttons */
#define BOTTOM 30   /* details and matched lines */

void tk_flame_options_init(tk_flame_options *o)
{
	memset(o, 0, sizeof *o);
}

/* Text content or attribute value: XML's five specials escaped, control characters (not allowed
 * in XML 1.0) and bytes that are not UTF-8 replaced, so any symbol yields a well-formed document. */
static void xml_text(FILE *out, const char *s, size_t maxchars)
{
	tk_xml_fput(out, s, maxchars);
}

/* Number of UTF-8 characters in s. */
static size_t utf8_len(const char *s)
{
	size_t n = 0;
	for (const unsigned char *c = (const unsigned char *)s; *c; c++)
		n += (*c & 0xC0) != 0x80;
	return n;
}

/* The label as drawn in a frame w pixels wide: whole, or cut with "..", or nothing. */
static void frame_text(FILE *out, const char *label, double x, double y, double w)
{
	size_t fit = w > 6 ? (size_t)((w - 6) / CHAR_W) : 0;
	if (fit < 3)
		return;
	fprintf(out, "<text x=\"%.2f\" y=\"%.1f\">", x + 3, y + 11.5);
	size_t n = utf8_len(label);
	if (n <= fit) {
		xml_text(out, label, SIZE_MAX);
	} else {
		xml_text(out, label, fit - 2);
		fputs("..", out);
	}
	fputs("</text>", out);
}

static uint32_t hash_str(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* Warm colours for the app's code, cool ones for system libraries, grey for frames with no binary;
 * the shade varies with the name so neighbours stay distinguishable and equal names look alike. */
static uint32_t default_color(const tk_calltree *t, const tk_cnode *n, const char *label)
{
	if (n->flags & TK_CNODE_ROOT)
		return 0xc8c8c8;
	const tk_profile *p = tk_calltree_profile(t);
	const tk_frame *f = n->frame ? tk_frame_get(p, n->frame) : NULL;
	uint32_t h = hash_str(label);
	double v1 = (h & 0xff) / 255.0, v2 = ((h >> 8) & 0xff) / 255.0, v3 = ((h >> 16) & 0xff) / 255.0;
	unsigned r, g, b;
	if (!f || !f->binary) {
		unsigned grey = 170 + (unsigned)(40 * v1);
		r = g = b = grey;
	} else if (tk_binary_is_system(p, f->binary)) {
		r = 60 + (unsigned)(60 * v1), g = 140 + (unsigned)(60 * v2), b = 200 + (unsigned)(55 * v3);
	} else {
		r = 205 + (unsigned)(50 * v1), g = 60 + (unsigned)(150 * v2), b = (unsigned)(55 * v3);
	}
	return r << 16 | g << 8 | b;
}

static const char script[] =
#include "write/svg_script.inc"
    ;

typedef struct item {
	tk_cnode_id id;
	double x; /* left edge in pixels */
} item;

/* Width in pixels of each group's graph and the scale from weight to pixels. */
static double px(uint64_t w, uint64_t total, double width)
{
	return total ? (double)w / (double)total * width : 0;
}

/* Walk a group's frames of at least min_w pixels and min_total weight (a child never weighs more
 * than its parent, so this set is closed under ancestors). Returns the deepest depth; appends the
 * weights to *ws when ws is not NULL. */
static uint32_t walk_visible(const tk_calltree *t, tk_cnode_id root, double width, double min_w, uint64_t min_total,
                             tk_cnode_id **st, size_t *cap, uint64_t **ws, size_t *nws, size_t *capws)
{
	uint64_t total = tk_calltree_node(t, root)->total;
	uint32_t maxd = 0;
	size_t n = 0;
	TK_GROW(*st, *cap, 1);
	(*st)[n++] = root;
	while (n) {
		const tk_cnode *c = tk_calltree_node(t, (*st)[--n]);
		if (c->depth > maxd)
			maxd = c->depth;
		for (tk_cnode_id k = c->first_child; k != TK_CNODE_NONE; k = tk_calltree_node(t, k)->next_sibling) {
			uint64_t kt = tk_calltree_node(t, k)->total;
			if (px(kt, total, width) < min_w || kt < min_total)
				continue;
			if (ws) {
				TK_GROW(*ws, *capws, *nws + 1);
				(*ws)[(*nws)++] = kt;
			}
			TK_GROW(*st, *cap, n + 1);
			(*st)[n++] = k;
		}
	}
	return maxd;
}

/* "1 sample", "2 samples" */
static const char *plural(uint64_t n)
{
	return n == 1 ? "" : "s";
}

static int by_weight_desc(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x > y ? -1 : x < y;
}

static void group_heading(FILE *out, const tk_calltree *t, const tk_calltree_group *g, char *buf, size_t cap)
{
	const tk_profile *p = tk_calltree_profile(t);
	switch (tk_calltree_grouping(t)) {
	case TK_GROUP_THREAD:
		snprintf(buf, cap, "Thread %s (tid %llu), process %s (pid %lld)",
		         g->name ? tk_string(p, g->name) : "(unnamed)", (unsigned long long)g->tid,
		         g->process ? tk_string(p, g->process) : "?", (long long)g->pid);
		break;
	case TK_GROUP_PROCESS:
		snprintf(buf, cap, "Process %s (pid %lld), %u threads", g->process ? tk_string(p, g->process) : "?",
		         (long long)g->pid, g->threads);
		break;
	default: snprintf(buf, cap, "All threads (%u)", g->threads); break;
	}
}

int tk_write_flamegraph(FILE *out, const tk_calltree *t, const tk_flame_options *o, tk_error *err)
{
	tk_flame_options def;
	if (!o) {
		tk_flame_options_init(&def);
		o = &def;
	}
	const tk_profile *p = tk_calltree_profile(t);
	tk_unit unit = tk_profile_unit(p);
	const char *uname = tk_wu_display_unit(unit);
	double W = o->width > 0 ? o->width : TK_FLAME_WIDTH;
	double gw = W - 2 * PAD;
	double min_w = o->min_width > 0 ? o->min_width : TK_FLAME_MIN_WIDTH;
	size_t ng = tk_calltree_group_count(t);
	/* One scale for every group: the heaviest is gw wide. */
	uint64_t gmax = 0;
	for (size_t g = 0; g < ng; g++) {
		uint64_t tot = tk_calltree_node(t, tk_calltree_group_get(t, g)->root)->total;
		if (tot > gmax)
			gmax = tot;
	}
	double *gws = tk_xmalloc((ng ? ng : 1) * sizeof *gws);
	for (size_t g = 0; g < ng; g++)
		gws[g] = gmax
		             ? gw * (double)tk_calltree_node(t, tk_calltree_group_get(t, g)->root)->total / (double)gmax
		             : gw;
	tk_cnode_id *st = NULL;
	size_t stcap = 0;
	uint32_t *depths = tk_xcalloc(ng ? ng : 1, sizeof *depths);
	double H = TOP + BOTTOM;
	uint64_t all = 0, all_samples = 0;
	/* The frame budget: when more than max_frames frames reach min_width, keep the max_frames
	 * heaviest (by weight, over all groups: a frame's share of the whole profile), so the detail
	 * that goes is what matters least, and small threads lose theirs first. */
	size_t max_frames = o->max_frames ? o->max_frames : TK_FLAME_MAX_FRAMES, nws = 0, capws = 0, left_out = 0;
	uint64_t min_total = 0, *ws = NULL;
	for (size_t g = 0; g < ng; g++)
		walk_visible(t, tk_calltree_group_get(t, g)->root, gws[g], min_w, 0, &st, &stcap, &ws, &nws, &capws);
	if (nws + ng > max_frames && max_frames > ng) {
		qsort(ws, nws, sizeof *ws, by_weight_desc);
		min_total = ws[max_frames - ng - 1];
		size_t keep = 0;
		while (keep < nws && ws[keep] >= min_total)
			keep++;
		if (keep > max_frames - ng) /* ties at the cut: drop them too */
			min_total++;
		left_out = 0;
		for (size_t i = 0; i < nws; i++)
			left_out += ws[i] < min_total;
	}
	free(ws);
	for (size_t g = 0; g < ng; g++) {
		const tk_calltree_group *grp = tk_calltree_group_get(t, g);
		depths[g] = walk_visible(t, grp->root, gws[g], min_w, min_total, &st, &stcap, NULL, NULL, NULL);
		H += SEC_HEAD + (depths[g] + 1) * FRAME_H + SEC_GAP;
		all += tk_calltree_node(t, grp->root)->total;
		all_samples += tk_calltree_node(t, grp->root)->samples;
	}
	char wbuf[48], sbuf[48], head[512];
	/* what the whole is called, for shares of it */
	const char *allname = tk_calltree_grouping(t) == TK_GROUP_THREAD    ? "all threads"
	                      : tk_calltree_grouping(t) == TK_GROUP_PROCESS ? "all processes"
	                                                                    : "all";
	fprintf(out,
	        "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
	        "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%.0f\" height=\"%.0f\" "
	        "viewBox=\"0 0 %.0f %.0f\" data-total=\"%llu\" data-unit=\"%s\" data-cw=\"%.1f\" data-gw=\"%.2f\" "
	        "data-all=\"%s\">\n",
	        W, H, W, H, (unsigned long long)all, uname, CHAR_W, gw, allname);
	fputs("<style>text{font-family:monospace;font-size:12px;fill:#000}"
	      "g.f rect{stroke:#fafafa;stroke-width:0.5}g.f:hover rect{stroke:#000}g.f{cursor:pointer}"
	      "#title{font-size:17px}#subtitle{fill:#555}.btn{cursor:pointer;fill:#06c}.hdr{fill:#333;font-weight:bold}"
	      ".hide{display:none}</style>\n",
	      out);
	fputs("<script type=\"text/ecmascript\"><![CDATA[\n", out);
	fputs(script, out);
	fputs("]]></script>\n", out);
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"#fafafa\"/>\n", W, H);
	fprintf(out, "<text id=\"title\" x=\"%.1f\" y=\"22\" text-anchor=\"middle\">", W / 2);
	xml_text(out, o->title ? o->title : "Flame graph", SIZE_MAX);
	fputs("</text>\n", out);
	tk_wu_weight(wbuf, sizeof wbuf, unit, tk_profile_weight_decimals(p), all);
	fprintf(out, "<text id=\"subtitle\" x=\"%.1f\" y=\"40\" text-anchor=\"middle\">", W / 2);
	if (o->subtitle) {
		xml_text(out, o->subtitle, SIZE_MAX);
	} else {
		/* weighed in samples, the weight is the sample count: said once ("375 samples", not twice) */
		fprintf(out, "%s %s", wbuf, uname);
		if (strcmp(uname, "samples") != 0 || all != all_samples)
			fprintf(out, ", %llu sample%s", (unsigned long long)all_samples, plural(all_samples));
		fprintf(out, ", %zu %s%s%s; unit %s; click a frame to zoom, Ctrl-F to search", ng,
		        tk_calltree_grouping(t) == TK_GROUP_THREAD ? "thread" : "group", ng == 1 ? "" : "s",
		        ng > 1 ? " drawn to one scale" : "", uname);
		if (tk_calltree_inverted(t))
			fputs("; bottom-up", out);
		if (left_out) {
			tk_wu_weight(sbuf, sizeof sbuf, unit, tk_profile_weight_decimals(p), min_total);
			fprintf(out, "; %zu frames under %s %s left out", left_out, sbuf, uname);
		}
	}
	fputs("</text>\n", out);
	fprintf(out, "<text id=\"unzoom\" class=\"btn hide\" x=\"%d\" y=\"22\">Reset Zoom</text>\n", PAD);
	fprintf(out, "<text id=\"search\" class=\"btn\" x=\"%.1f\" y=\"22\" text-anchor=\"end\">Search</text>\n",
	        W - PAD);
	fprintf(out, "<text id=\"details\" x=\"%d\" y=\"58\"> </text>\n", PAD);
	fprintf(out, "<text id=\"matched\" x=\"%.1f\" y=\"58\" text-anchor=\"end\"> </text>\n", W - PAD);

	/* what a hover line's percentage is of */
	const char *base = tk_calltree_grouping(t) == TK_GROUP_THREAD    ? "thread"
	                   : tk_calltree_grouping(t) == TK_GROUP_PROCESS ? "process"
	                                                                 : "all";
	double y0 = TOP;
	item *stack = NULL;
	size_t capstack = 0;
	char lbuf[32];
	for (size_t g = 0; g < ng; g++) {
		const tk_calltree_group *grp = tk_calltree_group_get(t, g);
		const tk_cnode *root = tk_calltree_node(t, grp->root);
		uint64_t total = root->total;
		group_heading(out, t, grp, head, sizeof head);
		double sec_h = (depths[g] + 1) * FRAME_H;
		fprintf(out, "<g class=\"sec\" data-w=\"%llu\">\n<text class=\"hdr\" x=\"%d\" y=\"%.0f\">",
		        (unsigned long long)total, PAD, y0 + 14);
		xml_text(out, head, SIZE_MAX);
		tk_wu_weight(wbuf, sizeof wbuf, unit, tk_profile_weight_decimals(p), total);
		fprintf(out, " \xe2\x80\x94 %s %s", wbuf, uname);
		if (ng > 1)
			fprintf(out, " (%.2f%% of %s)", tk_wu_percent(total, all), allname);
		fputs("</text>\n", out);
		double gwg = gws[g];
		double top = y0 + SEC_HEAD;
		size_t ns = 0;
		TK_GROW(stack, capstack, 1);
		stack[ns++] = (item){grp->root, PAD};
		while (ns) {
			item it = stack[--ns];
			const tk_cnode *n = tk_calltree_node(t, it.id);
			double w = px(n->total, total, gwg);
			double y = o->icicle ? top + n->depth * FRAME_H : top + sec_h - (n->depth + 1) * FRAME_H;
			const char *label = (n->flags & TK_CNODE_ROOT) ? head : tk_cnode_label(t, n, lbuf);
			const char *bin = tk_cnode_binary(t, n);
			uint32_t color = o->color ? o->color(o->ctx, t, n) : TK_FLAME_DEFAULT_COLOR;
			if (color == TK_FLAME_DEFAULT_COLOR)
				color = default_color(t, n, label);
			fprintf(out, "<g class=\"f\" data-d=\"%u\" data-w=\"%llu\"><title>", n->depth,
			        (unsigned long long)n->total);
			xml_text(out, label, SIZE_MAX);
			putc('\n', out);
			if (*bin) {
				xml_text(out, bin, SIZE_MAX);
				if (n->flags & TK_CNODE_INLINED)
					fputs(" (inlined)", out);
				putc('\n', out);
			}
			tk_wu_weight(wbuf, sizeof wbuf, unit, tk_profile_weight_decimals(p), n->total);
			tk_wu_weight(sbuf, sizeof sbuf, unit, tk_profile_weight_decimals(p), n->self);
			fprintf(out, "total %s %s (%.2f%% of %s), self %s %s, %llu sample%s", wbuf, uname,
			        tk_wu_percent(n->total, total), base, sbuf, uname, (unsigned long long)n->samples,
			        plural(n->samples));
			if (o->note) {
				char note[256] = "";
				o->note(o->ctx, t, n, note, sizeof note);
				if (*note) {
					putc('\n', out);
					xml_text(out, note, SIZE_MAX);
				}
			}
			fprintf(out,
			        "</title><rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" height=\"%d\" fill=\"#%06x\"/>",
			        it.x, y, w, FRAME_H - 1, color & 0xffffff);
			frame_text(out, label, it.x, y, w);
			fputs("</g>\n", out);
			/* Children left to right by the tree's order; pushed in reverse so they pop in order. */
			size_t first = ns;
			double cx = it.x;
			for (tk_cnode_id k = n->first_child; k != TK_CNODE_NONE;
			     k = tk_calltree_node(t, k)->next_sibling) {
				const tk_cnode *c = tk_calltree_node(t, k);
				double cw = px(c->total, total, gwg);
				if (cw >= min_w && c->total >= min_total) {
					TK_GROW(stack, capstack, ns + 1);
					stack[ns++] = (item){k, cx};
				}
				cx += cw;
			}
			for (size_t a = first, b = ns; b > a + 1; a++, b--) {
				item tmp = stack[a];
				stack[a] = stack[b - 1];
				stack[b - 1] = tmp;
			}
		}
		fputs("</g>\n", out);
		y0 += SEC_HEAD + sec_h + SEC_GAP;
	}
	fputs("</svg>\n", out);
	free(stack);
	free(st);
	free(depths);
	free(gws);
	return tk_wu_finish(out, "svg", err);
}

/* The table's entry: per thread or merged, top-down. */
int tk_write_svg(FILE *out, const tk_profile *p, const tk_convert_options *o, tk_error *err);
int tk_write_svg(FILE *out, const tk_profile *p, const tk_convert_options *o, tk_error *err)
{
	tk_calltree_options co;
	tk_calltree_options_init(&co);
	co.group = o->merge_threads ? TK_GROUP_ALL : TK_GROUP_THREAD;
	tk_calltree *t = tk_calltree_build(p, &co, err);
	if (!t)
		return -1;
	tk_flame_options fo;
	tk_flame_options_init(&fo);
	fo.title = o->title;
	fo.icicle = o->inverted;
	fo.min_width = o->min_width;
	fo.max_frames = o->max_frames;
	int rc = tk_write_flamegraph(out, t, &fo, err);
	tk_calltree_free(t);
	return rc;
}
