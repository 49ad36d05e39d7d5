/*
 * macOS `sample` reports (/usr/bin/sample PID -f out.txt; also what Activity Monitor's "Sample
 * Process" saves):
 *
 *   Analysis of sampling rg (pid 64751) every 1 millisecond
 *   Process:         rg [64751]
 *   …
 *   Call graph:
 *       825 Thread_15758523   DispatchQueue_1: com.apple.main-thread  (serial)
 *       + 825 start  (in libdyld.dylib) + 1  [0x7fff737cf3d5]
 *       +   825 main  (in rg) + 41  [0x10384b549]
 *       …
 *   Total number in stack (recursive counted multiple, when >=5):   (ignored: derived)
 *   Sort by top of stack, same collapsed (when >= 5):                (ignored: derived)
 *   Binary Images:
 *          0x103746000 -        0x103b4cff7 +rg (0) <UUID> /usr/local/bin/rg
 *
 * The call graph is a tree of inclusive sample counts; the depth is the column of the count
 * (after the guide characters `+ ! : |`). Each node's self count (count − Σ children) becomes
 * that many samples on its root path; a thread row's own self count is the empty stack. Merged
 * call sites list several addresses (`+ 10,20  [0x…86a,0x…874]`): the first is kept. The Binary
 * Images come after the call graph, so the graph is held as a node list (one per line, i.e. per
 * distinct stack) until the images are known; then frames get binaries with path, UUID, arch and
 * load address, and every image also goes to the profile's image list (for `???` frames).
 * Format notes: docs/xctrace-format.md §14.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read/lines.h"
#include "tracekit/read.h"
#include "util/mem.h"

typedef struct snode {
	uint32_t parent; /* index + 1; 0 for a thread row */
	uint32_t column;
	uint64_t count, child;
	tk_str name, image, file; /* image 0: none (`<unknown binary>`) */
	uint32_t line;
	uint64_t addr;
	uint64_t lineno;
	tk_thread_id thread;
	int is_thread;
} snode;

typedef struct img {
	tk_str name, path, uuid;
	uint64_t lo, hi;
} img;

typedef struct smp {
	tk_profile *p;
	const char *name;
	snode *nodes;
	size_t nnodes, capnodes;
	uint32_t *open; /* indices of the open path */
	size_t nopen, capopen;
	img *imgs;
	size_t nimgs, capimgs;
	int64_t pid;
	tk_str process, arch;
	uint32_t thread_col; /* column of the thread rows + 1 (0 before the first) */
} smp;

static int starts(const char *s, size_t n, const char *lit)
{
	size_t l = strlen(lit);
	return n >= l && memcmp(s, lit, l) == 0;
}

static size_t trim_end(const char *s, size_t n)
{
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	return n;
}

static const char *find_last(const char *s, size_t n, const char *lit)
{
	size_t l = strlen(lit);
	for (size_t i = n; i >= l; i--)
		if (memcmp(s + i - l, lit, l) == 0)
			return s + i - l;
	return NULL;
}

static int hexval(const char *s, size_t n, uint64_t *v, size_t *used)
{
	size_t i = 0;
	if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		i = 2;
	size_t b = i;
	uint64_t x = 0;
	while (i < n && i - b < 16) {
		char c = s[i];
		int d = c >= '0' && c <= '9'   ? c - '0'
		        : c >= 'a' && c <= 'f' ? c - 'a' + 10
		        : c >= 'A' && c <= 'F' ? c - 'A' + 10
		                               : -1;
		if (d < 0)
			break;
		x = x << 4 | (uint64_t)d;
		i++;
	}
	if (i == b)
		return -1;
	*v = x;
	*used = i;
	return 0;
}

/* Header lines we use: "Process:         rg [64751]", "Code Type:       X86-64". */
static void header_line(smp *m, const char *s, size_t n)
{
	n = trim_end(s, n);
	if (starts(s, n, "Process:")) {
		size_t i = 8;
		while (i < n && s[i] == ' ')
			i++;
		const char *br = find_last(s + i, n - i, " [");
		if (br && s[n - 1] == ']') {
			m->process = tk_intern(m->p, s + i, (size_t)(br - s - i));
			m->pid = strtoll(br + 2, NULL, 10);
		} else
			m->process = tk_intern(m->p, s + i, n - i);
	} else if (starts(s, n, "Code Type:")) {
		size_t i = 10;
		while (i < n && s[i] == ' ')
			i++;
		const char *a = s + i;
		size_t l = n - i;
		m->arch = l == 6 && memcmp(a, "X86-64", 6) == 0   ? tk_intern_cstr(m->p, "x86_64")
		          : l == 5 && memcmp(a, "ARM64", 5) == 0  ? tk_intern_cstr(m->p, "arm64")
		          : l == 6 && memcmp(a, "ARM64E", 6) == 0 ? tk_intern_cstr(m->p, "arm64e")
		                                                  : tk_intern(m->p, a, l);
	}
}

/* One call-graph line. */
static int graph_line(smp *m, const char *s, size_t n, uint64_t lineno, tk_error *err)
{
	size_t i = 0;
	while (i < n && (s[i] == ' ' || s[i] == '+' || s[i] == '!' || s[i] == ':' || s[i] == '|'))
		i++;
	size_t col = i;
	uint64_t count = 0;
	size_t d = i;
	while (i < n && s[i] >= '0' && s[i] <= '9' && i - d < 19)
		count = count * 10 + (uint64_t)(s[i++] - '0');
	if (i == d || i >= n || s[i] != ' ')
		return tk_error_set(err,
		                    "%s:%llu: expected `COUNT FRAME` after the guides (`+ ! : |`) in the call graph",
		                    m->name, (unsigned long long)lineno);
	while (i < n && s[i] == ' ')
		i++;
	const char *t = s + i;
	size_t tl = trim_end(t, n - i);
	while (m->nopen && m->nodes[m->open[m->nopen - 1]].column >= col)
		m->nopen--;
	/* `sample` indents each level by two columns (guides `+ ! : |` and blanks) under its caller, and
	 * puts every thread row in the same column: anything else is a damaged report, not a tree we
	 * can trust (a child read as a sibling would move weight between functions). */
	if (m->nopen && col != m->nodes[m->open[m->nopen - 1]].column + 2)
		return tk_error_set(
		    err,
		    "%s:%llu: the count is at column %zu, but a call-graph line is indented two columns "
		    "under its caller (line %llu, column %u) or level with a sibling",
		    m->name, (unsigned long long)lineno, col + 1,
		    (unsigned long long)m->nodes[m->open[m->nopen - 1]].lineno,
		    m->nodes[m->open[m->nopen - 1]].column + 1);
	if (!m->nopen && m->thread_col && col + 1 != m->thread_col)
		return tk_error_set(err, "%s:%llu: the count is at column %zu, but the thread rows' is at column %u",
		                    m->name, (unsigned long long)lineno, col + 1, m->thread_col);
	snode x = {0};
	x.column = (uint32_t)col;
	x.count = count;
	x.lineno = lineno;
	if (!m->nopen) {
		if (!starts(t, tl, "Thread_"))
			return tk_error_set(err, "%s:%llu: a call graph root that is not a `Thread_ID` row", m->name,
			                    (unsigned long long)lineno);
		uint64_t tid = 0;
		size_t k = 7, used;
		if (hexval(t + 7, tl - 7, &tid, &used) == 0 && starts(t + 7, tl - 7, "0x"))
			k += used;
		else {
			tid = 0;
			while (k < tl && t[k] >= '0' && t[k] <= '9' && k < 26)
				tid = tid * 10 + (uint64_t)(t[k++] - '0');
		}
		if (k == 7)
			return tk_error_set(err, "%s:%llu: `Thread_` without a thread id", m->name,
			                    (unsigned long long)lineno);
		while (k < tl && (t[k] == ':' || t[k] == ' '))
			k++;
		x.is_thread = 1;
		m->thread_col = (uint32_t)col + 1;
		x.thread =
		    tk_thread_get_or_add(m->p, m->pid, tid, k < tl ? tk_intern(m->p, t + k, tl - k) : 0, m->process);
	} else {
		snode *par = &m->nodes[m->open[m->nopen - 1]];
		if (count > par->count - par->child)
			return tk_error_set(
			    err, "%s:%llu: count %llu is more than the %llu left of its caller's (line %llu)", m->name,
			    (unsigned long long)lineno, (unsigned long long)count,
			    (unsigned long long)(par->count - par->child), (unsigned long long)par->lineno);
		par->child += count;
		x.parent = m->open[m->nopen - 1] + 1;
		x.thread = par->thread;
		/* "name  (in image) + off  [0xaddr,…]  file:line" */
		const char *br = find_last(t, tl, "  [");
		size_t nl = tl;
		if (br) {
			size_t used;
			const char *a = br + 3;
			if (hexval(a, (size_t)(t + tl - a), &x.addr, &used) < 0)
				return tk_error_set(err, "%s:%llu: expected an address after `[`", m->name,
				                    (unsigned long long)lineno);
			const char *close = memchr(a, ']', (size_t)(t + tl - a));
			if (close) {
				const char *src = close + 1;
				size_t sl = (size_t)(t + tl - src);
				while (sl && *src == ' ')
					src++, sl--;
				const char *colon = sl ? find_last(src, sl, ":") : NULL;
				if (colon && colon + 1 < src + sl) {
					uint32_t ln = 0;
					int ok = 1;
					for (const char *c = colon + 1; c < src + sl; c++)
						if (*c >= '0' && *c <= '9' && ln < 100000000)
							ln = ln * 10 + (uint32_t)(*c - '0');
						else
							ok = 0;
					if (ok) {
						x.file = tk_intern(m->p, src, (size_t)(colon - src));
						x.line = ln;
					}
				}
			}
			nl = trim_end(t, (size_t)(br - t));
		}
		const char *in = find_last(t, nl, "  (in ");
		if (in) {
			const char *ib = in + 6;
			const char *ie = memchr(ib, ')', (size_t)(t + nl - ib));
			/* image names can hold ')' ("Foo (2)"): the last ") " or ")" at the end closes it */
			for (const char *c = ib; c < t + nl; c++)
				if (*c == ')' && (c + 1 == t + nl || c[1] == ' '))
					ie = c;
			if (!ie)
				return tk_error_set(err, "%s:%llu: `(in IMAGE` without `)`", m->name,
				                    (unsigned long long)lineno);
			if (!(ie - ib == 16 && memcmp(ib, "<unknown binary>", 16) == 0))
				x.image = tk_intern(m->p, ib, (size_t)(ie - ib));
			nl = trim_end(t, (size_t)(in - t));
		}
		if (!nl)
			return tk_error_set(err, "%s:%llu: a frame without a name", m->name,
			                    (unsigned long long)lineno);
		if (!(nl == 3 && memcmp(t, "???", 3) == 0))
			x.name = tk_intern(m->p, t, nl);
	}
	TK_GROW(m->nodes, m->capnodes, m->nnodes + 1);
	m->nodes[m->nnodes] = x;
	TK_GROW(m->open, m->capopen, m->nopen + 1);
	m->open[m->nopen++] = (uint32_t)m->nnodes++;
	return 0;
}

/* "       0x106fa0000 -        0x106fa0ff3 +org.mozilla.plugincontainer (1.0) <UUID> /path" */
static int image_line(smp *m, const char *s, size_t n, uint64_t lineno, tk_error *err)
{
	size_t i = 0, used;
	while (i < n && s[i] == ' ')
		i++;
	img g = {0};
	if (hexval(s + i, n - i, &g.lo, &used) < 0)
		return tk_error_set(err, "%s:%llu: expected `START - END NAME (VERSION) <UUID> PATH`", m->name,
		                    (unsigned long long)lineno);
	i += used;
	while (i < n && s[i] == ' ')
		i++;
	if (i < n && s[i] == '-')
		i++;
	while (i < n && s[i] == ' ')
		i++;
	if (hexval(s + i, n - i, &g.hi, &used) == 0)
		i += used;
	const char *lt = memchr(s + i, '<', n - i);
	const char *gt = lt ? memchr(lt, '>', (size_t)(s + n - lt)) : NULL;
	if (!gt || gt + 2 > s + n)
		return tk_error_set(err, "%s:%llu: a binary image without `<UUID> PATH`", m->name,
		                    (unsigned long long)lineno);
	g.uuid = tk_intern(m->p, lt + 1, (size_t)(gt - lt - 1));
	const char *path = gt + 1;
	while (path < s + n && *path == ' ')
		path++;
	size_t pl = trim_end(path, (size_t)(s + n - path));
	g.path = tk_intern(m->p, path, pl);
	const char *base = path;
	for (const char *c = path; c < path + pl; c++)
		if (*c == '/')
			base = c + 1;
	g.name = tk_intern(m->p, base, (size_t)(path + pl - base));
	TK_GROW(m->imgs, m->capimgs, m->nimgs + 1);
	m->imgs[m->nimgs++] = g;
	return 0;
}

static tk_binary_id binary_for(smp *m, tk_str image)
{
	for (size_t i = 0; i < m->nimgs; i++)
		if (m->imgs[i].name == image) {
			tk_binary b = {m->imgs[i].name, m->imgs[i].path, m->imgs[i].uuid, m->arch, m->imgs[i].lo};
			return tk_binary_add(m->p, &b);
		}
	tk_binary b = {0};
	b.name = image;
	b.arch = m->arch;
	return tk_binary_add(m->p, &b);
}

static void build(smp *m)
{
	for (size_t i = 0; i < m->nimgs; i++) {
		tk_binary b = {m->imgs[i].name, m->imgs[i].path, m->imgs[i].uuid, m->arch, m->imgs[i].lo};
		tk_profile_image_add(m->p, &b);
	}
	/* binary ids per image name, found once */
	tk_stack_id *stacks = tk_xmalloc((m->nnodes ? m->nnodes : 1) * sizeof *stacks);
	for (size_t i = 0; i < m->nnodes; i++) {
		snode *x = &m->nodes[i];
		tk_stack_id st = 0;
		if (!x->is_thread) {
			tk_frame f = {0};
			f.addr = x->addr;
			f.name = x->name;
			f.file = x->file;
			f.line = x->line;
			f.binary = x->image ? binary_for(m, x->image) : 0;
			tk_stack_id parent = m->nodes[x->parent - 1].is_thread ? 0 : stacks[x->parent - 1];
			st = tk_stack_push(m->p, parent, tk_frame_add(m->p, &f));
		}
		stacks[i] = st;
		uint64_t self = x->count - x->child;
		if (self)
			tk_sample_add_n(m->p, x->thread, st, self, self);
	}
	free(stacks);
}

/* What the command prints before the report when it writes to a terminal, and what Activity
 * Monitor's "Sample Process" text starts with:
 *   Sampling process 1740 for 3 seconds with 1 millisecond of run time between samples
 *   Sampling completed, processing symbols...
 *   Sample analysis of process 1740 written to file /tmp/x.sample.txt
 * (and `sample NAME -wait`'s "Waiting for 'NAME' to appear..."). */
static int preamble_line(const char *s, size_t n)
{
	return starts(s, n, "Sampling process ") || starts(s, n, "Sampling completed") ||
	       starts(s, n, "Sample analysis of process ") || starts(s, n, "Waiting for ");
}

static int sample_sniff(const unsigned char *head, size_t n)
{
	const char *s;
	size_t at = 0, len;
	for (int k = 0; k < 8 && at < n; k++) {
		len = tk_head_line(head, n, at, &s);
		at += len + 1;
		size_t tn = trim_end(s, len && s[len - 1] == '\r' ? len - 1 : len);
		if (starts(s, tn, "Analysis of sampling "))
			return 1;
		if (k == 0 && starts(s, tn, "Process:")) /* a report whose first line was cut */
			return memmem(head, n, "\nCall graph:", 12) != NULL;
		if (tn && !preamble_line(s, tn))
			return 0;
	}
	return 0;
}

static int sample_read(tk_profile *p, tk_input *in, const tk_read_options *o, tk_error *err)
{
	smp m = {0};
	m.p = p;
	m.pid = -1;
	m.name = tk_input_name(in);
	tk_lines l;
	tk_lines_init(&l, in, o);
	enum { HEAD, GRAPH, OTHER, IMAGES } sec = HEAD;
	int saw_graph = 0;
	const char *s;
	size_t n;
	int rc;
	while ((rc = tk_lines_next(&l, &s, &n, err)) > 0) {
		size_t tn = trim_end(s, n);
		if (tn == 0) {
			if (sec == GRAPH)
				sec = OTHER;
			continue;
		}
		if (s[0] != ' ' && sec == GRAPH && !starts(s, tn, "Total number in stack") &&
		    !starts(s, tn, "Sort by top of stack") && !starts(s, tn, "Binary Images:")) {
			/* inside the call graph every line is indented: this one would silently end it */
			rc = tk_error_set(err,
			                  "%s:%llu: a call-graph line that does not start with blanks (the graph ends "
			                  "with a blank line)",
			                  m.name, (unsigned long long)l.lineno);
			break;
		}
		if (s[0] != ' ') { /* a section heading or a header line */
			if (starts(s, tn, "Call graph:")) {
				if (saw_graph) {
					rc = tk_error_set(err, "%s:%llu: a second call graph", m.name,
					                  (unsigned long long)l.lineno);
					break;
				}
				sec = GRAPH;
				saw_graph = 1;
			} else if (starts(s, tn, "Binary Images:"))
				sec = IMAGES;
			else if (sec == HEAD)
				header_line(&m, s, tn);
			else
				sec = OTHER;
			continue;
		}
		if (sec == GRAPH)
			rc = graph_line(&m, s, tn, l.lineno, err);
		else if (sec == IMAGES)
			rc = image_line(&m, s, tn, l.lineno, err);
		if (rc < 0)
			break;
	}
	uint64_t last = l.lineno;
	tk_lines_free(&l);
	char note[400];
	if (rc == 0 && sec == GRAPH && m.nnodes) {
		/* A report cut short: the counts read are right, but callees after the cut are missing, so
		 * their weight stays with the callers read (as self). */
		snprintf(note, sizeof note, "ends inside the call graph at line %llu: truncated?",
		         (unsigned long long)last);
		tk_profile_set_meta(p, "truncated", note);
		if (o && o->warn) {
			snprintf(
			    note, sizeof note,
			    "%s: the report ends before its call graph ends (line %llu): it may be truncated; weight "
			    "below the last lines read is counted as their self weight",
			    m.name, (unsigned long long)last);
			o->warn(o->warn_ctx, note);
		}
	}
	if (rc == 0 && !saw_graph)
		rc = tk_error_set(err, "%s: no `Call graph:` section", m.name);
	if (rc == 0 && !m.nnodes)
		rc = tk_error_set(err, "%s: an empty call graph", m.name);
	if (rc == 0) {
		tk_profile_set_unit(p, TK_UNIT_SAMPLES);
		build(&m);
		tk_profile_set_meta(p, "format", "macos-sample");
		char buf[32];
		snprintf(buf, sizeof buf, "%zu", m.nimgs);
		tk_profile_set_meta(p, "binary-images", buf);
	}
	free(m.nodes);
	free(m.open);
	free(m.imgs);
	return rc < 0 ? -1 : 0;
}

const tk_reader tk_reader_sample = {"macos-sample", sample_sniff, sample_read};
