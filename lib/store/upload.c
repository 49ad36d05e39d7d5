/* The device side of `tracekit serve --ingest`: POST a session's bundle, retry with back-off,
 * and mark the session uploaded only once the server acknowledged it (after its commit). */
#include <curl/curl.h>
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "store/internal.h"
#include "util/mem.h"

typedef struct resp {
	char text[512];
	size_t n;
} resp;

static size_t on_data(char *data, size_t size, size_t nmemb, void *ctx)
{
	resp *r = ctx;
	size_t n = size * nmemb, room = sizeof r->text - 1 - r->n;
	memcpy(r->text + r->n, data, n < room ? n : room);
	r->n += n < room ? n : room;
	r->text[r->n] = 0;
	return size * nmemb;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0)
		;
}

/* The acknowledgement is written beside the records (write + rename): a crash leaves either no
 * mark (the session is sent again, and stored once: ids are content hashes) or the mark. Not
 * fsync'd: the mark is written only after the server committed the session durably, so a mark that
 * exists (even one a power loss left empty) is true, and one lost is a harmless resend; an fsync per
 * session was most of the uploader's system time (500 of them for 500 sessions, bench_upload.sh). */
static int mark_uploaded(const char *dir, const char *ack, tk_error *err)
{
	char tmp[4096], path[4096];
	snprintf(tmp, sizeof tmp, "%s/uploaded.tmp", dir);
	snprintf(path, sizeof path, "%s/uploaded", dir);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return tk_error_set(err, "%s: cannot write: %m", tmp);
	size_t n = strlen(ack);
	int ok = write(fd, ack, n) == (ssize_t)n;
	ok &= close(fd) == 0;
	if (!ok || rename(tmp, path) != 0)
		return tk_error_set(err, "%s: cannot write: %m", path);
	return 0;
}

/* The marks of a pack's sessions, all holding the same acknowledgement: one file written (in the
 * first session, as mark_uploaded writes it) and hard-linked as the others' marks. A link makes no
 * new inode: on ext4 each new inode is searched for past the inodes deleted in the last minutes
 * (`recently_deleted` in its allocator), so creating a mark per session cost more and more kernel
 * time while older marks and bundles were being removed (bench_upload.sh: 20 → 160 µs a session
 * over a series of runs; a link stays at ~10 µs). A link is atomic like the rename: a mark exists
 * whole or not at all. Where links fail (another file system under a session, no hard links), or a
 * mark exists already (--force), that session's mark is written on its own. */
static int mark_pack(const char *const *dirs, size_t n, const char *ack, tk_error *err)
{
	char tmp[4096], path[4096];
	snprintf(tmp, sizeof tmp, "%s/uploaded.tmp", dirs[0]);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return tk_error_set(err, "%s: cannot write: %m", tmp);
	size_t len = strlen(ack);
	int ok = write(fd, ack, len) == (ssize_t)len;
	if (close(fd) != 0 || !ok) {
		unlink(tmp);
		return tk_error_set(err, "%s/uploaded: cannot write: %m", dirs[0]);
	}
	for (size_t i = 1; i < n; i++) {
		snprintf(path, sizeof path, "%s/uploaded", dirs[i]);
		if (link(tmp, path) != 0 && mark_uploaded(dirs[i], ack, err))
			return unlink(tmp), -1;
	}
	snprintf(path, sizeof path, "%s/uploaded", dirs[0]);
	if (rename(tmp, path) != 0)
		return tk_error_set(err, "%s: cannot write: %m", path);
	return 0;
}

/* POST body with retries; on a 2xx the answer's first line is in ack. Returns 0, 1 (4xx) or -1. */
static int post(const char *url, const char *what, const void *body, size_t n, const tk_upload_options *o, char *ack,
                size_t ackn, tk_error *err)
{
	/* uploads may run on several threads at once: curl is set up once per process */
	if (tk_store_curl_init() < 0)
		return tk_error_set(err, "%s: cannot start libcurl", url);
	CURL *c = o->conn ? (CURL *)o->conn : curl_easy_init(); /* a kept connection: reset below keeps it open */
	if (!c)
		return tk_error_set(err, "%s: cannot start libcurl", url);
	char auth[1024];
	snprintf(auth, sizeof auth, "Authorization: Bearer %s", o->token ? o->token : "");
	struct curl_slist *hdr = curl_slist_append(NULL, auth);
	hdr = curl_slist_append(hdr, "Content-Type: application/x-tracekit-bundle");
	hdr = curl_slist_append(hdr, "Expect:");
	unsigned attempts = o->max_attempts ? o->max_attempts : 8;
	unsigned delay = o->first_delay_ms ? o->first_delay_ms : 500;
	unsigned max_delay = o->max_delay_ms ? o->max_delay_ms : 30000;
	int rc = -1;
	for (unsigned a = 1;; a++) {
		resp r = {.n = 0};
		r.text[0] = 0;
		curl_easy_reset(c);
		curl_easy_setopt(c, CURLOPT_URL, url);
		curl_easy_setopt(c, CURLOPT_POST, 1L);
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)n);
		curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
		curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
		curl_easy_setopt(c, CURLOPT_WRITEDATA, &r);
		curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
		curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 10L);
		curl_easy_setopt(c, CURLOPT_TIMEOUT, 120L);
		CURLcode cc = curl_easy_perform(c);
		long status = 0;
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
		r.text[strcspn(r.text, "\n")] = 0;
		if (cc == CURLE_OK && status >= 200 && status < 300) {
			snprintf(ack, ackn, "%s", r.text);
			rc = 0;
			break;
		}
		if (cc == CURLE_OK && status >= 400 && status < 500) {
			tk_error_set(err, "%s: %s rejected it: HTTP %ld: %s", what, url, status, r.text);
			rc = 1;
			break;
		}
		if (cc != CURLE_OK)
			tk_error_set(err, "%s: %s: %s (after %u attempt%s)", what, url, curl_easy_strerror(cc), a,
			             a == 1 ? "" : "s");
		else
			tk_error_set(err, "%s: %s: HTTP %ld: %s (after %u attempt%s)", what, url, status, r.text, a,
			             a == 1 ? "" : "s");
		if (a >= attempts)
			break;
		sleep_ms(delay);
		delay = delay * 2 > max_delay ? max_delay : delay * 2;
	}
	curl_slist_free_all(hdr);
	if (!o->conn)
		curl_easy_cleanup(c);
	return rc;
}

tk_upload_conn *tk_upload_conn_new(void)
{
	if (tk_store_curl_init() < 0)
		return NULL;
	return (tk_upload_conn *)curl_easy_init();
}

void tk_upload_conn_free(tk_upload_conn *conn)
{
	if (conn)
		curl_easy_cleanup((CURL *)conn);
}

int tk_upload_session(const char *url, const char *dir, const tk_upload_options *o, tk_error *err)
{
	void *body;
	size_t n;
	if (tk_bundle_make(dir, o->meta, &body, &n, err))
		return -1;
	char ack[512];
	int rc = post(url, dir, body, n, o, ack, sizeof ack, err);
	free(body);
	if (rc == 0)
		rc = mark_uploaded(dir, ack, err);
	return rc;
}

int tk_upload_pack(const char *url, const char *const *dirs, size_t n, const tk_upload_options *o, tk_error *err)
{
	if (n == 1)
		return tk_upload_session(url, dirs[0], o, err);
	void *body;
	size_t bn;
	if (tk_bundle_make_pack(dirs, n, o->meta, &body, &bn, err))
		return -1;
	char ack[512], what[4200];
	snprintf(what, sizeof what, "%s and %zu more session%s", dirs[0], n - 1, n == 2 ? "" : "s");
	int rc = post(url, what, body, bn, o, ack, sizeof ack, err);
	free(body);
	return rc ? rc : mark_pack(dirs, n, ack, err);
}

int tk_upload_profile(const char *url, const char *path, const tk_upload_options *o, tk_error *err)
{
	void *body;
	size_t n;
	if (tk_bundle_make_profile(path, o->meta, &body, &n, err))
		return -1;
	char ack[512];
	int rc = post(url, path, body, n, o, ack, sizeof ack, err);
	free(body);
	return rc;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *read_whole(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *b = NULL;
	size_t cap = 0, got = 0, r;
	do {
		TK_GROW(b, cap, got + 65536);
		r = fread(b + got, 1, cap - got, f);
		got += r;
	} while (r > 0);
	int bad = ferror(f);
	fclose(f);
	if (bad) {
		free(b);
		return NULL;
	}
	*n = got;
	return b;
}

int tk_upload_outbox(const char *url, const char *dir, const tk_upload_options *o, size_t *sent, size_t *left,
                     tk_error *err)
{
	size_t dummy_sent, dummy_left;
	sent = sent ? sent : &dummy_sent;
	left = left ? left : &dummy_left;
	*sent = *left = 0;
	char box[4096], rej[4200];
	snprintf(box, sizeof box, "%s/outbox", dir);
	snprintf(rej, sizeof rej, "%s/rejected", box);
	char **names = NULL;
	size_t n = 0, cap = 0;
	DIR *d = opendir(box);
	for (struct dirent *e; d && (e = readdir(d));) {
		size_t len = strlen(e->d_name);
		if (e->d_name[0] == '.' || len < 8 || strcmp(e->d_name + len - 7, ".bundle") != 0)
			continue;
		TK_GROW(names, cap, n + 1);
		names[n++] = tk_xstrdup(e->d_name);
	}
	if (d)
		closedir(d);
	if (n)
		qsort(names, n, sizeof *names, cmp_str);
	int rc = 0;
	char ack[512] = "";
	for (size_t i = 0; i < n; i++) {
		char path[8300];
		snprintf(path, sizeof path, "%s/%s", box, names[i]);
		size_t len;
		void *body = rc < 0 ? NULL : read_whole(path, &len);
		if (!body) {
			if (rc >= 0)
				rc = -1, tk_error_set(err, "%s: cannot read: %m", path);
			(*left)++;
			continue;
		}
		int r = post(url, path, body, len, o, ack, sizeof ack, err);
		free(body);
		if (r == 0) {
			unlink(path);
			(*sent)++;
		} else if (r == 1) {
			char to[8400];
			snprintf(to, sizeof to, "%s/%s", rej, names[i]);
			mkdir(rej, 0755);
			if (rename(path, to) != 0)
				unlink(path);
			rc = rc < 0 ? rc : 1;
		} else {
			rc = -1;
			(*left)++;
		}
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	struct stat st;
	if (rc == 0 && stat(rej, &st) != 0) {
		char mark[600];
		snprintf(mark, sizeof mark, "outbox: %zu record bundle%s acknowledged at exit%s%s\n", *sent,
		         *sent == 1 ? "" : "s", *ack ? "; last answer " : "", ack);
		rc = mark_uploaded(dir, mark, err);
	}
	return rc;
}
