/*
 * Apple's reports (tracekit/apple_report.h): what the three report readers share — sniffing, the
 * tk_apple_report they fill, and turning a report into a profile with its event.
 * Format notes: docs/apple-reports.md.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "read/apple_report_int.h"
#include "util/mem.h"

#define REPORT_MAX_BYTES ((size_t)512 << 20)

/* -1 with err when buf[0..len) holds a NUL byte (a text report holds none) */
static int nul_check(const char *name, const char *buf, size_t len, tk_error *err)
{
	const char *z = memchr(buf, 0, len);
	if (!z)
		return 0;
	size_t line = 1;
	for (const char *c = buf; c < z; c++)
		line += *c == '\n';
	return tk_error_set(err, "%s:%zu: NUL byte: not a text report", name, line);
}

char *tk_apple_report_slurp(tk_input *in, size_t *n, int allow_nul, tk_error *err)
{
	size_t cap = 1 << 16, len = 0;
	char *buf = tk_xmalloc(cap);
	for (;;) {
		if (cap - len < 4096) {
			if (cap >= REPORT_MAX_BYTES) {
				free(buf);
				tk_error_set(err, "%s: larger than %zu MB: not a report", tk_input_name(in),
				             REPORT_MAX_BYTES >> 20);
				return NULL;
			}
			cap *= 2;
			buf = tk_xrealloc(buf, cap);
		}
		ptrdiff_t got = tk_input_read(in, buf + len, cap - len - 1, err);
		if (got < 0) {
			free(buf);
			return NULL;
		}
		if (got == 0)
			break;
		len += (size_t)got;
	}
	buf[len] = 0;
	if (!allow_nul && nul_check(tk_input_name(in), buf, len, err) < 0) {
		free(buf);
		return NULL;
	}
	*n = len;
	return buf;
}

void tk_apple_report_split_lines(tk_apple_report *r, const char *buf, size_t n)
{
	size_t cap = 0;
	for (size_t i = 0; i < n;) {
		const char *nl = memchr(buf + i, '\n', n - i);
		size_t e = nl ? (size_t)(nl - buf) : n;
		size_t l = e - i;
		if (l && buf[e - 1] == '\r')
			l--;
		TK_GROW(r->lines, cap, r->nlines + 1);
		r->lines[r->nlines++] = tk_xstrndup(buf + i, l);
		i = e + 1;
	}
}

void tk_apple_report_set_attr(tk_apple_report *r, const char *key, const char *value, size_t len)
{
	if (!value)
		return;
	while (len && (value[len - 1] == ' ' || value[len - 1] == '\t'))
		len--;
	if (!len)
		return;
	for (size_t i = 0; i < r->nattr; i++)
		if (!strcmp(r->attr[2 * i], key)) {
			free(r->attr[2 * i + 1]);
			r->attr[2 * i + 1] = tk_xstrndup(value, len);
			return;
		}
	if ((r->nattr & (r->nattr - 1)) == 0) /* grow at powers of two */
		r->attr = tk_xrealloc(r->attr, (r->nattr ? 2 * r->nattr : 1) * 2 * sizeof *r->attr);
	r->attr[2 * r->nattr] = tk_xstrdup(key);
	r->attr[2 * r->nattr + 1] = tk_xstrndup(value, len);
	r->nattr++;
}

const char *tk_apple_report_attr(const tk_apple_report *r, const char *key)
{
	for (size_t i = 0; i < r->nattr; i++)
		if (!strcmp(r->attr[2 * i], key))
			return r->attr[2 * i + 1];
	return NULL;
}

tk_apple_report_thread *tk_apple_report_add_thread(tk_apple_report *r)
{
	if ((r->nthreads & (r->nthreads - 1)) == 0) /* grow at powers of two */
		r->threads = tk_xrealloc(r->threads, (r->nthreads ? 2 * r->nthreads : 1) * sizeof *r->threads);
	tk_apple_report_thread *t = &r->threads[r->nthreads++];
	memset(t, 0, sizeof *t);
	t->process = r->nprocesses ? r->nprocesses - 1 : 0;
	return t;
}

tk_apple_report_frame *tk_apple_report_add_frame(tk_apple_report_thread *t)
{
	if ((t->nframes & (t->nframes - 1)) == 0) /* grow at powers of two */
		t->frames = tk_xrealloc(t->frames, (t->nframes ? 2 * t->nframes : 1) * sizeof *t->frames);
	tk_apple_report_frame *f = &t->frames[t->nframes++];
	memset(f, 0, sizeof *f);
	f->count = 1;
	f->line_no = SIZE_MAX;
	return f;
}

tk_apple_report_image *tk_apple_report_add_image(tk_apple_report *r)
{
	if ((r->nimages & (r->nimages - 1)) == 0)
		r->images = tk_xrealloc(r->images, (r->nimages ? 2 * r->nimages : 1) * sizeof *r->images);
	tk_apple_report_image *im = &r->images[r->nimages++];
	memset(im, 0, sizeof *im);
	return im;
}

tk_apple_report_process *tk_apple_report_add_process(tk_apple_report *r)
{
	r->processes = tk_xrealloc(r->processes, (r->nprocesses + 1) * sizeof *r->processes);
	tk_apple_report_process *p = &r->processes[r->nprocesses++];
	memset(p, 0, sizeof *p);
	p->pid = -1;
	p->first_image = r->nimages;
	return p;
}

char *tk_apple_report_uuid(const char *s, size_t n)
{
	char hex[32];
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c == '-')
			continue;
		int ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
		if (!ok || k == 32)
			return NULL;
		hex[k++] = c >= 'a' ? (char)(c - 32) : c;
	}
	if (k != 32)
		return NULL;
	char *o = tk_xmalloc(37);
	size_t j = 0;
	for (size_t i = 0; i < 32; i++) {
		if (i == 8 || i == 12 || i == 16 || i == 20)
			o[j++] = '-';
		o[j++] = hex[i];
	}
	o[j] = 0;
	return o;
}

double tk_apple_report_parse_time(const char *s, size_t n)
{
	char b[64];
	if (n >= sizeof b)
		return NAN;
	memcpy(b, s, n);
	b[n] = 0;
	int Y, M, D, h, m, sec, used = 0;
	/* "YYYY-MM-DD hh:mm:ss" digit for digit (what reports write) without sscanf, which reads the same
	 * numbers from it; any other form goes through sscanf */
	static const char form[] = "dddd-dd-dd dd:dd:dd";
	int plain = n >= sizeof form - 1;
	for (size_t i = 0; plain && i < sizeof form - 1; i++)
		plain = form[i] == 'd' ? b[i] >= '0' && b[i] <= '9' : b[i] == form[i];
	if (plain) {
#define D2(i) ((b[i] - '0') * 10 + (b[(i) + 1] - '0'))
		Y = D2(0) * 100 + D2(2), M = D2(5), D = D2(8), h = D2(11), m = D2(14), sec = D2(17);
#undef D2
		used = (int)sizeof form - 1;
	} else if (sscanf(b, "%4d-%2d-%2d %2d:%2d:%2d%n", &Y, &M, &D, &h, &m, &sec, &used) != 6)
		return NAN;
	double frac = 0;
	const char *p = b + used;
	if (*p == '.') {
		double scale = 0.1;
		for (p++; *p >= '0' && *p <= '9'; p++, scale /= 10)
			frac += (*p - '0') * scale;
	}
	while (*p == ' ')
		p++;
	int tz = 0;
	if (*p == '+' || *p == '-') {
		/* the offset is exactly HHMM ("+0100"): any other run of digits is not a time we know (and
		 * reading it as one number overflowed an int on "+000222…") */
		const char *d = p + 1;
		for (int i = 0; i < 4; i++)
			if (d[i] < '0' || d[i] > '9')
				return NAN;
		if (d[4] >= '0' && d[4] <= '9')
			return NAN;
		int hh = (d[0] - '0') * 10 + (d[1] - '0'), mm = (d[2] - '0') * 10 + (d[3] - '0');
		if (hh > 23 || mm > 59)
			return NAN;
		tz = (hh * 60 + mm) * 60 * (*p == '-' ? -1 : 1);
	}
	if (M < 1 || M > 12 || D < 1 || D > 31 || h > 23 || m > 59 || sec > 60)
		return NAN;
	struct tm t = {0};
	t.tm_year = Y - 1900;
	t.tm_mon = M - 1;
	t.tm_mday = D;
	t.tm_hour = h;
	t.tm_min = m;
	t.tm_sec = sec;
	return (double)timegm(&t) - tz + frac;
}

const char *tk_apple_report_arch_name(const char *s, size_t n)
{
	static const char *const map[][2] = {{"ARM-64", "arm64"},  {"ARM64", "arm64"},   {"ARM64E", "arm64e"},
	                                     {"X86-64", "x86_64"}, {"x86_64", "x86_64"}, {"arm64e", "arm64e"},
	                                     {"arm64", "arm64"},   {"ARM", "armv7"},     {"X86", "i386"}};
	size_t k = 0;
	while (k < n && s[k] != ' ')
		k++;
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
		if (strlen(map[i][0]) == k && memcmp(map[i][0], s, k) == 0)
			return map[i][1];
	return NULL;
}

int tk_apple_report_starts(const char *s, size_t n, const char *lit)
{
	size_t l = strlen(lit);
	return n >= l && memcmp(s, lit, l) == 0;
}

size_t tk_apple_report_trim(const char *s, size_t n)
{
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	return n;
}

const char *tk_apple_report_field(const char *s, size_t n, const char *key, size_t *vlen)
{
	size_t l = strlen(key);
	if (n < l + 1 || memcmp(s, key, l) != 0 || s[l] != ':')
		return NULL;
	size_t i = l + 1;
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	*vlen = tk_apple_report_trim(s + i, n - i);
	return s + i;
}

int tk_apple_report_hex(const char *s, size_t n, uint64_t *v, size_t *used)
{
	size_t i = 0;
	if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		i = 2;
	size_t b = i;
	uint64_t x = 0;
	for (; i < n && i - b < 16; i++) {
		char c = s[i];
		int d = c >= '0' && c <= '9'   ? c - '0'
		        : c >= 'a' && c <= 'f' ? c - 'a' + 10
		        : c >= 'A' && c <= 'F' ? c - 'A' + 10
		                               : -1;
		if (d < 0)
			break;
		x = x << 4 | (uint64_t)d;
	}
	if (i == b)
		return -1;
	*v = x;
	*used = i;
	return 0;
}

static void attr_json(tk_apple_report *r, const char *key, json_t *v)
{
	if (json_is_string(v))
		tk_apple_report_set_attr(r, key, json_string_value(v), json_string_length(v));
	else if (json_is_integer(v)) {
		char b[32];
		snprintf(b, sizeof b, "%lld", (long long)json_integer_value(v));
		tk_apple_report_set_attr(r, key, b, strlen(b));
	}
}

void tk_apple_report_header_attrs(tk_apple_report *r, void *hv)
{
	json_t *h = hv;
	attr_json(r, "app", json_object_get(h, "app_name"));
	if (!tk_apple_report_attr(r, "app"))
		attr_json(r, "app", json_object_get(h, "name"));
	attr_json(r, "app.version", json_object_get(h, "app_version"));
	attr_json(r, "app.build", json_object_get(h, "build_version"));
	attr_json(r, "bundle", json_object_get(h, "bundleID"));
	attr_json(r, "os", json_object_get(h, "os_version"));
	attr_json(r, "incident", json_object_get(h, "incident_id"));
	json_t *bt = json_object_get(h, "bug_type");
	if (json_is_string(bt)) {
		free(r->bug_type);
		r->bug_type = tk_xstrdup(json_string_value(bt));
	}
	json_t *ts = json_object_get(h, "timestamp");
	if (json_is_string(ts))
		r->wall = tk_apple_report_parse_time(json_string_value(ts), json_string_length(ts));
}

long tk_apple_report_read_header(tk_apple_report *r, const char *buf, size_t n, tk_error *err)
{
	size_t i = 0;
	while (i < n && (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\r' || buf[i] == '\n'))
		i++;
	if (i >= n || buf[i] != '{')
		return 0;
	const char *nl = memchr(buf + i, '\n', n - i);
	size_t e = nl ? (size_t)(nl - buf) : n;
	json_error_t je;
	/* most header lines are flat and plain: no need of jansson's lexer (the same tree) */
	json_t *h = tk_apple_report_json_strict(buf + i, e - i);
	if (!h)
		h = json_loadb(buf + i, e - i, 0, &je);
	if (!h || !json_is_object(h)) {
		json_decref(h);
		return tk_error_set(err, "%s:1:%d: the report's header line is not a JSON object: %s", r->name,
		                    je.column + (int)i, h ? "not an object" : je.text);
	}
	tk_apple_report_header_attrs(r, h);
	r->json_header = h;
	return (long)(nl ? e + 1 : e);
}

/* ---- sniffing ---- */

static const char *memstr(const char *h, size_t n, const char *needle)
{
	size_t l = strlen(needle);
	if (l > n)
		return NULL;
	for (size_t i = 0; i + l <= n; i++)
		if (h[i] == needle[0] && memcmp(h + i, needle, l) == 0)
			return h + i;
	return NULL;
}

static int text_is_crash(const char *s, size_t n)
{
	size_t i = 0;
	while (i < n && (s[i] == ' ' || s[i] == '\n' || s[i] == '\r' || s[i] == '\t'))
		i++;
	s += i;
	n -= i;
	if (!(tk_apple_report_starts(s, n, "Incident Identifier:") || tk_apple_report_starts(s, n, "Process:") ||
	      tk_apple_report_starts(s, n, "Hardware Model:") || tk_apple_report_starts(s, n, "CrashReporter Key:")))
		return 0;
	return memstr(s, n, "\nException Type:") || memstr(s, n, "\nCrashed Thread:") ||
	       memstr(s, n, "\nTriggered by Thread:") || memstr(s, n, "\nThread 0");
}

static int text_is_spindump(const char *s, size_t n)
{
	size_t i = 0;
	while (i < n && (s[i] == ' ' || s[i] == '\n' || s[i] == '\r' || s[i] == '\t'))
		i++;
	s += i;
	n -= i;
	if (!tk_apple_report_starts(s, n, "Date/Time:"))
		return 0;
	return memstr(s, n, "\nData Source:") || memstr(s, n, "\nSteps:") || memstr(s, n, "\nEvent:") ||
	       memstr(s, n, "\nCommand:") || memstr(s, n, "\nReport Version:");
}

tk_apple_report_format tk_apple_report_sniff(const unsigned char *head, size_t n)
{
	const char *s = (const char *)head;
	size_t i = 0;
	while (i < n && (s[i] == ' ' || s[i] == '\n' || s[i] == '\r' || s[i] == '\t'))
		i++;
	if (i < n && s[i] == '{') {
		const char *nl = memchr(s + i, '\n', n - i);
		if (!nl)
			return 0;
		size_t e = (size_t)(nl - s);
		if (!memstr(s + i, e - i, "\"bug_type\""))
			return 0;
		size_t b = e + 1;
		while (b < n && (s[b] == ' ' || s[b] == '\n' || s[b] == '\r' || s[b] == '\t'))
			b++;
		if (b >= n)
			return TK_APPLE_IPS; /* header only so far: the reader says what is missing */
		if (s[b] == '{')
			return TK_APPLE_IPS;
		if (text_is_crash(s + b, n - b))
			return TK_APPLE_CRASH;
		if (text_is_spindump(s + b, n - b))
			return TK_APPLE_SPINDUMP;
		return 0;
	}
	if (text_is_crash(s, n))
		return TK_APPLE_CRASH;
	if (text_is_spindump(s, n))
		return TK_APPLE_SPINDUMP;
	return 0;
}

/* ---- reading ---- */

static tk_apple_report *report_new(const char *name)
{
	tk_apple_report *r = tk_xcalloc(1, sizeof *r);
	r->name = tk_xstrdup(name);
	r->wall = NAN;
	r->duration = NAN;
	r->target_process = SIZE_MAX;
	return r;
}

/* The report of format f in buf[0..n) (NUL-terminated, no NUL before n), read by name. */
static tk_apple_report *read_text(const char *name, tk_apple_report_format f, char *buf, size_t n, unsigned flags,
                                  tk_error *err)
{
	tk_apple_report *r = report_new(name);
	r->format = f;
	long body = tk_apple_report_read_header(r, buf, n, err);
	int rc = body < 0              ? -1
	         : f == TK_APPLE_IPS   ? tk_apple_report_parse_ips(r, buf, n, (size_t)body, flags, err)
	         : f == TK_APPLE_CRASH ? tk_apple_report_parse_crash(r, buf, n, (size_t)body, err)
	                               : tk_apple_report_parse_spindump(r, buf, n, (size_t)body, err);
	if (rc < 0) {
		tk_apple_report_free(r);
		return NULL;
	}
	return r;
}

/* The format of the input name whose first bytes are head[0..hn); 0 with err when it is empty or not
 * a report (err->msg empty with TK_APPLE_REPORT_IF_REPORT: to be skipped). */
static tk_apple_report_format sniff_named(const char *name, const unsigned char *head, size_t hn, unsigned flags,
                                          tk_error *err)
{
	tk_apple_report_format f = tk_apple_report_sniff(head, hn);
	if ((flags & TK_APPLE_REPORT_IF_REPORT) && (!hn || !f)) {
		if (err)
			err->msg[0] = 0;
		return 0;
	}
	if (!hn)
		tk_error_set(err, "%s: empty input", name);
	else if (!f)
		tk_error_set(err,
		             "%s: not an Apple report (expected an .ips, a .crash text or a spindump / microstackshot "
		             "text)",
		             name);
	return f;
}

tk_apple_report *tk_apple_report_read(tk_input *in, tk_error *err)
{
	return tk_apple_report_read_ex(in, 0, err);
}

tk_apple_report *tk_apple_report_read_ex(tk_input *in, unsigned flags, tk_error *err)
{
	size_t hn;
	const unsigned char *head = tk_input_head(in, &hn);
	tk_apple_report_format f = sniff_named(tk_input_name(in), head, hn, flags, err);
	if (!f)
		return NULL;
	size_t n;
	char *buf = tk_apple_report_slurp(in, &n, 0, err);
	if (!buf)
		return NULL;
	tk_apple_report *r = read_text(tk_input_name(in), f, buf, n, flags, err);
	free(buf);
	return r;
}

tk_apple_report *tk_apple_report_read_path(const char *path, tk_error *err)
{
	return tk_apple_report_read_path_ex(path, 0, err);
}

tk_apple_report *tk_apple_report_read_path_ex(const char *path, unsigned flags, tk_error *err)
{
	tk_input *in = tk_input_open(path, err);
	if (!in)
		return NULL;
	tk_apple_report *r = tk_apple_report_read_ex(in, flags, err);
	tk_input_close(in);
	return r;
}

/* ---- a batch's reader: one buffer for every report, one open, fstat, read and close per file ---- */

/* plain files up to this size are read whole into the reader's buffer; others (and standard input,
 * gzip'd files, anything not a regular file) go through tk_input as tk_apple_report_read_path_ex */
#define READER_MAX_BYTES ((size_t)64 << 20)

struct tk_apple_report_reader {
	char *buf;
	size_t cap;
	/* the directory of the last path opened (its fd, its name with the slash): a batch's files in one
	 * directory are opened by their names in it, without the path walked each time */
	int dfd;
	char *dir;
	size_t dirlen;
};

tk_apple_report_reader *tk_apple_report_reader_new(void)
{
	tk_apple_report_reader *rd = tk_xcalloc(1, sizeof *rd);
	rd->dfd = -1;
	return rd;
}

void tk_apple_report_reader_free(tk_apple_report_reader *rd)
{
	if (!rd)
		return;
	if (rd->dfd >= 0)
		close(rd->dfd);
	free(rd->dir);
	free(rd->buf);
	free(rd);
}

/* path opened read-only, by its name in the directory of the previous one when they share it */
static int reader_open(tk_apple_report_reader *rd, const char *path)
{
	const char *sl = strrchr(path, '/');
	if (!sl || !sl[1])
		return open(path, O_RDONLY | O_CLOEXEC);
	size_t dl = (size_t)(sl - path) + 1; /* with the slash */
	if (!(rd->dfd >= 0 && rd->dirlen == dl && !memcmp(rd->dir, path, dl))) {
		if (rd->dfd >= 0)
			close(rd->dfd);
		free(rd->dir);
		rd->dir = tk_xstrndup(path, dl);
		rd->dirlen = dl;
		rd->dfd = open(dl == 1 ? "/" : rd->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (rd->dfd < 0)
			return open(path, O_RDONLY | O_CLOEXEC);
	}
	return openat(rd->dfd, sl + 1, O_RDONLY | O_CLOEXEC);
}

/* A regular file of at most READER_MAX_BYTES into rd->buf, NUL-terminated: its size, or -1 when it
 * is to be read through tk_input (which then gives the error, if any). */
static ptrdiff_t reader_load(tk_apple_report_reader *rd, const char *path)
{
	int fd = reader_open(rd, path);
	if (fd < 0)
		return -1;
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > READER_MAX_BYTES) {
		close(fd);
		return -1;
	}
	size_t size = (size_t)st.st_size, len = 0;
	for (;;) {
		/* room for the whole file, one byte more (a short read there is its end) and the NUL */
		if (rd->cap < len + 4096 || rd->cap < size + 2) {
			size_t c = rd->cap ? rd->cap : 65536;
			while (c < len + 4096 || c < size + 2)
				c *= 2;
			if (c > READER_MAX_BYTES + 8192) { /* it grew while read: tk_input's turn */
				close(fd);
				return -1;
			}
			rd->buf = tk_xrealloc(rd->buf, c);
			rd->cap = c;
		}
		ssize_t got = read(fd, rd->buf + len, rd->cap - 1 - len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			close(fd);
			return -1;
		}
		len += (size_t)got;
		/* at its size with room left over, or no more: the end */
		if (got == 0 || (len >= size && len < rd->cap - 1))
			break;
	}
	close(fd);
	rd->buf[len] = 0;
	return (ptrdiff_t)len;
}

tk_apple_report *tk_apple_report_reader_read(tk_apple_report_reader *rd, const char *path, unsigned flags,
                                             tk_error *err)
{
	ptrdiff_t got = strcmp(path, "-") ? reader_load(rd, path) : -1;
	const unsigned char *u = (const unsigned char *)rd->buf;
	if (got < 0 || (got >= 2 && u[0] == 0x1f && u[1] == 0x8b)) /* gzip: tk_input undoes it */
		return tk_apple_report_read_path_ex(path, flags, err);
	/* what tk_apple_report_read_ex does with the same bytes (its head is the first TK_INPUT_HEAD) */
	size_t n = (size_t)got, hn = n < TK_INPUT_HEAD ? n : TK_INPUT_HEAD;
	tk_apple_report_format f = sniff_named(path, u, hn, flags, err);
	if (!f || nul_check(path, rd->buf, n, err) < 0)
		return NULL;
	tk_apple_report *r = read_text(path, f, rd->buf, n, flags, err);
	if (rd->cap > ((size_t)4 << 20)) { /* a big report's buffer is not kept for the next ones */
		free(rd->buf);
		rd->buf = NULL;
		rd->cap = 0;
	}
	return r;
}

static void free_frames(tk_apple_report_thread *t)
{
	for (size_t i = 0; i < t->nframes; i++) {
		tk_apple_report_frame *f = &t->frames[i];
		free(f->symbol);
		free(f->file);
		/* f->sym is in the report's sym_pool */
	}
	free(t->frames);
}

void tk_apple_report_free(tk_apple_report *r)
{
	if (!r)
		return;
	free((char *)r->name);
	free(r->event_name);
	free(r->bug_type);
	for (size_t i = 0; i < 2 * r->nattr; i++)
		free(r->attr[i]);
	free(r->attr);
	for (size_t i = 0; i < r->nthreads; i++) {
		free_frames(&r->threads[i]);
		free(r->threads[i].name);
		free(r->threads[i].queue);
	}
	free(r->threads);
	if (r->leb) {
		free_frames(r->leb);
		free(r->leb);
	}
	for (size_t i = 0; i < r->nimages; i++) {
		tk_apple_report_image *im = &r->images[i];
		free(im->name);
		free(im->path);
		free(im->uuid);
		free(im->arch);
		free(im->why);
	}
	free(r->images);
	for (size_t i = 0; i < r->nprocesses; i++)
		free(r->processes[i].name);
	free(r->processes);
	for (size_t i = 0; i < r->nlines; i++)
		free(r->lines[i]);
	free(r->lines);
	json_decref(r->json_header);
	json_decref(r->json_body);
	for (void *c = r->sym_pool; c;) {
		void *next = *(void **)c;
		free(c);
		c = next;
	}
	free(r);
}

/* ---- into a profile ---- */

static const char *format_name(tk_apple_report_format f)
{
	return f == TK_APPLE_IPS ? "ips" : f == TK_APPLE_CRASH ? "crash" : "spindump";
}

int tk_apple_report_to_profile(const tk_apple_report *r, tk_profile *p, tk_error *err)
{
	(void)err;
	tk_profile_set_unit(p, TK_UNIT_SAMPLES);
	tk_profile_set_meta(p, "format", format_name(r->format));
	if (r->bug_type)
		tk_profile_set_meta(p, "bug-type", r->bug_type);
	tk_binary_id *bins = tk_xcalloc(r->nimages + 1, sizeof *bins);
	for (size_t i = 0; i < r->nimages; i++) {
		const tk_apple_report_image *im = &r->images[i];
		tk_binary b = {0};
		b.name = tk_intern_cstr(p, im->name ? im->name : "");
		b.path = tk_intern_cstr(p, im->path ? im->path : "");
		b.uuid = im->uuid ? tk_intern_cstr(p, im->uuid) : 0;
		b.arch = tk_intern_cstr(p, im->arch ? im->arch : "");
		b.load_addr = im->base;
		bins[i + 1] = tk_binary_add(p, &b);
		if (im->uuid)
			tk_profile_image_add(p, &b);
	}
	tk_event ev = {0};
	ev.kind = r->kind;
	ev.name = tk_intern_cstr(p, r->event_name ? r->event_name : tk_event_kind_name(r->kind));
	const char *inc = tk_apple_report_attr(r, "incident");
	ev.key = inc ? tk_intern_cstr(p, inc) : 0;
	ev.start = UINT64_MAX;
	/* a duration the report cannot have (negative, not finite, past 2^64 ns) counts as unknown */
	ev.duration = r->duration >= 0 && r->duration * 1e9 < 1.8e19 ? (uint64_t)(r->duration * 1e9 + 0.5)
	              : isnan(r->duration) && r->kind == TK_EVENT_CRASH ? 0
	                                                                 : UINT64_MAX;
	ev.wall = r->wall;
	ev.thread = TK_NO_THREAD;
	tk_event_id e = tk_event_add(p, &ev);
	for (size_t i = 0; i < r->nattr; i++)
		tk_event_set_str(p, e, r->attr[2 * i], r->attr[2 * i + 1]);
	if (r->bug_type)
		tk_event_set_str(p, e, "bug_type", r->bug_type);

	int drawn = 0; /* 1: drawn on a first owned thread, 2: on the attributed one */
	tk_binary_id kernel_bin = 0;
	size_t cap = 64;
	tk_frame_id *ids = tk_xmalloc(cap * sizeof *ids);
	tk_stack_id *path = tk_xmalloc(cap * sizeof *path);
	uint64_t *child = tk_xmalloc(cap * sizeof *child);
	for (size_t i = 0; i < r->nthreads; i++) {
		const tk_apple_report_thread *t = &r->threads[i];
		const tk_apple_report_process *pr = t->process < r->nprocesses ? &r->processes[t->process] : NULL;
		int64_t pid = pr ? pr->pid : -1;
		const char *pname = pr && pr->name ? pr->name : tk_apple_report_attr(r, "process");
		if (pid < 0 && tk_apple_report_attr(r, "pid"))
			pid = strtoll(tk_apple_report_attr(r, "pid"), NULL, 10);
		const char *tname = t->name ? t->name : t->queue;
		tk_thread_id th = tk_thread_get_or_add(p, pid, t->id, tname ? tk_intern_cstr(p, tname) : 0,
		                                       pname ? tk_intern_cstr(p, pname) : 0);
		tk_thread_role role;
		if (r->format == TK_APPLE_SPINDUMP) {
			if (r->target_process != SIZE_MAX && t->process != r->target_process)
				role = TK_ROLE_NONE;
			else
				role = (t->queue && !strcmp(t->queue, "com.apple.main-thread")) ? TK_ROLE_ATTRIBUTED
				                                                                : TK_ROLE_OWNED;
		} else /* "a crash report is an event whose threads each hold one sample" (profile.h) */
			role = t->crashed ? TK_ROLE_ATTRIBUTED : TK_ROLE_OWNED;
		if (role != TK_ROLE_NONE)
			tk_thread_set_event(p, th, e, role);
		/* drawn on (and signed by, in the store) the crashed or blocked thread, else the first */
		if ((role == TK_ROLE_ATTRIBUTED && drawn < 2) || (role == TK_ROLE_OWNED && !drawn)) {
			tk_event_set_thread(p, e, th);
			drawn = role == TK_ROLE_ATTRIBUTED ? 2 : 1;
		}
		if (t->nframes > cap) {
			cap = t->nframes;
			ids = tk_xrealloc(ids, cap * sizeof *ids);
			path = tk_xrealloc(path, (cap + 1) * sizeof *path);
			child = tk_xrealloc(child, (cap + 1) * sizeof *child);
		}
		if (r->format != TK_APPLE_SPINDUMP) {
			for (size_t k = 0; k < t->nframes; k++) {
				const tk_apple_report_frame *f = &t->frames[k];
				tk_frame fr = {0};
				fr.addr = f->addr;
				fr.name = f->symbol ? tk_intern_cstr(p, f->symbol) : 0;
				fr.binary = f->image ? bins[f->image] : 0;
				fr.file = f->file ? tk_intern_cstr(p, f->file) : 0;
				fr.line = f->line;
				fr.flags = k == 0 ? TK_FRAME_LEAF_PC : 0;
				ids[k] = tk_frame_add(p, &fr);
			}
			tk_sample_add(p, th, tk_stack_from_leaf_first(p, ids, t->nframes), 1, UINT64_MAX);
			continue;
		}
		/* spindump: a tree of inclusive counts, frames in line order with their depth */
		size_t open = 0; /* path[0..open) stacks, child[0..open) Σ children counts */
		uint64_t *cnt = tk_xmalloc((t->nframes + 1) * sizeof *cnt);
		size_t *at = tk_xmalloc((t->nframes + 1) * sizeof *at);
		uint64_t flush_total = 0;
		for (size_t k = 0; k <= t->nframes; k++) {
			uint32_t d = k < t->nframes ? t->frames[k].depth : 1;
			if (d < 1)
				d = 1;
			if (d > open + 1)
				d = (uint32_t)open + 1;
			while (open >= d) { /* close the frames at depth >= d: their self counts are samples */
				open--;
				uint64_t self = cnt[open] > child[open] ? cnt[open] - child[open] : 0;
				if (self)
					tk_sample_add_n(p, th, path[open], self, self);
				flush_total += self;
			}
			if (k == t->nframes)
				break;
			const tk_apple_report_frame *f = &t->frames[k];
			tk_frame fr = {0};
			fr.addr = f->addr;
			fr.name = f->symbol ? tk_intern_cstr(p, f->symbol) : 0;
			fr.binary = f->image ? bins[f->image] : 0;
			if (!fr.binary && f->kernel) { /* `*` frames: the kernel's, system code for signatures */
				if (!kernel_bin) {
					tk_binary kb = {0};
					kb.name = tk_intern_cstr(p, "kernel");
					kb.path = tk_intern_cstr(p, "/System/Library/Kernels/kernel");
					kernel_bin = tk_binary_add(p, &kb);
				}
				fr.binary = kernel_bin;
			}
			fr.file = f->file ? tk_intern_cstr(p, f->file) : 0;
			fr.line = f->line;
			tk_frame_id id = tk_frame_add(p, &fr);
			path[open] = tk_stack_push(p, open ? path[open - 1] : 0, id);
			cnt[open] = f->count;
			child[open] = 0;
			at[open] = k;
			if (open)
				child[open - 1] += f->count;
			open++;
		}
		(void)flush_total;
		free(cnt);
		free(at);
	}
	free(ids);
	free(path);
	free(child);
	free(bins);
	return 0;
}

/* The registry's readers (ips.c, crash.c, spindump.c) share this one. */
int tk_apple_report_read_profile(tk_profile *p, tk_input *in, tk_error *err)
{
	/* a profile needs no JSON tree of the frames: the .ips scanner reads them */
	tk_apple_report *r = tk_apple_report_read_ex(in, TK_APPLE_REPORT_TEXT_ONLY, err);
	if (!r)
		return -1;
	int rc = tk_apple_report_to_profile(r, p, err);
	tk_apple_report_free(r);
	return rc;
}

/* ---- batch inputs ---- */

typedef struct plist {
	char **v;
	size_t n, cap;
	unsigned char *lazy; /* with lazy listing: 1 for a file not opened */
	size_t lcap;
	int lazy_mode;
} plist;

static void plist_add(plist *l, char *p, int lazy)
{
	TK_GROW(l->v, l->cap, l->n + 1);
	if (l->lazy_mode) {
		TK_GROW(l->lazy, l->lcap, l->n + 1);
		l->lazy[l->n] = (unsigned char)lazy;
	}
	l->v[l->n++] = p;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int walk(const char *dir, plist *l, int depth, tk_error *err)
{
	if (depth > 64)
		return 0;
	DIR *d = opendir(dir);
	if (!d)
		return tk_error_set(err, "%s: %s", dir, strerror(errno));
	struct dirent *e;
	plist here = {0};
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		size_t dl = strlen(dir), el = strlen(e->d_name);
		/* the entry's type after its name's NUL: a lazy listing needs no stat of a regular file */
		char *p = tk_xmalloc(dl + el + 3);
		memcpy(p, dir, dl);
		p[dl] = '/';
		memcpy(p + dl + 1, e->d_name, el + 1);
		p[dl + el + 2] = e->d_type == DT_REG ? 'f' : e->d_type == DT_DIR ? 'd' : '?';
		TK_GROW(here.v, here.cap, here.n + 1);
		here.v[here.n++] = p;
	}
	closedir(d);
	qsort(here.v, here.n, sizeof *here.v, cmp_str);
	int rc = 0;
	for (size_t i = 0; i < here.n; i++) {
		struct stat st;
		char *p = here.v[i];
		char type = p[strlen(p) + 1];
		if (rc == 0 && l->lazy_mode && type == 'f') {
			plist_add(l, p, 1);
			continue;
		}
		if (rc == 0 && (type == 'd' || stat(p, &st) == 0)) {
			if (type == 'd' || S_ISDIR(st.st_mode)) {
				size_t pl = strlen(p);
				/* symbol bundles hold no reports */
				if (!(pl > 5 && !strcmp(p + pl - 5, ".dSYM")))
					rc = walk(p, l, depth + 1, err);
			} else if (S_ISREG(st.st_mode)) {
				tk_error e2;
				tk_input *in = tk_input_open(p, &e2);
				size_t hn = 0;
				const unsigned char *h = in ? tk_input_head(in, &hn) : NULL;
				int is = h && tk_apple_report_sniff(h, hn) != 0;
				tk_input_close(in);
				if (is) {
					plist_add(l, p, 0);
					continue;
				}
			}
		}
		free(p);
	}
	free(here.v);
	return rc;
}

static int list_paths(const char *const *paths, size_t n, char ***out, unsigned char **lazy, size_t *nout,
                      tk_error *err)
{
	plist l = {0};
	l.lazy_mode = lazy != NULL;
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		if (strcmp(paths[i], "-") != 0 && stat(paths[i], &st) != 0) {
			tk_error_set(err, "%s: %s", paths[i], strerror(errno));
			goto fail;
		}
		if (strcmp(paths[i], "-") != 0 && S_ISDIR(st.st_mode)) {
			if (walk(paths[i], &l, 0, err) < 0)
				goto fail;
		} else {
			plist_add(&l, tk_xstrdup(paths[i]), 0);
		}
	}
	*out = l.v;
	*nout = l.n;
	if (lazy)
		*lazy = l.lazy ? l.lazy : tk_xcalloc(1, 1);
	return 0;
fail:
	for (size_t i = 0; i < l.n; i++)
		free(l.v[i]);
	free(l.v);
	free(l.lazy);
	return -1;
}

int tk_apple_report_list(const char *const *paths, size_t n, char ***out, size_t *nout, tk_error *err)
{
	return list_paths(paths, n, out, NULL, nout, err);
}

int tk_apple_report_list_ex(const char *const *paths, size_t n, char ***out, unsigned char **lazy, size_t *nout,
                            tk_error *err)
{
	return list_paths(paths, n, out, lazy, nout, err);
}

int tk_apple_report_image_text(const char *s, size_t n, tk_apple_image_text *out)
{
	size_t i = 0, used;
	while (i < n && s[i] == ' ')
		i++;
	*out = (tk_apple_image_text){0};
	if (!tk_apple_report_starts(s + i, n - i, "0x") || tk_apple_report_hex(s + i, n - i, &out->lo, &used) < 0)
		return 0;
	i += used;
	while (i < n && s[i] == ' ')
		i++;
	if (i >= n || s[i] != '-')
		return 0;
	i++;
	while (i < n && s[i] == ' ')
		i++;
	if (tk_apple_report_starts(s + i, n - i, "0x") && tk_apple_report_hex(s + i, n - i, &out->hi, &used) == 0)
		i += used;
	else if (tk_apple_report_starts(s + i, n - i, "???"))
		i += 3;
	else
		return 0;
	const char *lt = memchr(s + i, '<', n - i);
	const char *gt = lt ? memchr(lt, '>', (size_t)(s + n - lt)) : NULL;
	if (!gt)
		return 0;
	const char *nm = s + i;
	size_t nl = (size_t)(lt - nm);
	while (nl && (*nm == ' ' || *nm == '+'))
		nm++, nl--;
	nl = tk_apple_report_trim(nm, nl);
	if (nl && nm[nl - 1] == ')') { /* "(*)", "(1.0 - 1)", "name 1.0 (1)" */
		size_t k = nl;
		while (k && nm[k - 1] != '(')
			k--;
		if (k)
			nl = tk_apple_report_trim(nm, k - 1);
	}
	out->name = nm;
	out->name_len = nl;
	out->uuid = lt + 1;
	out->uuid_len = (size_t)(gt - lt - 1);
	const char *p = gt + 1;
	while (p < s + n && *p == ' ')
		p++;
	out->path = p;
	out->path_len = p < s + n ? tk_apple_report_trim(p, (size_t)(s + n - p)) : 0;
	return 1;
}
