/* The device side of `tracekit serve --ingest`: POST a session's bundle, retry with back-off,
 * and mark the session uploaded only once the server acknowledged it (after its commit). */
#include <curl/curl.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
 * mark (the session is sent again, and stored once: ids are content hashes) or the whole mark. */
static int mark_uploaded(const char *dir, const char *ack, tk_error *err)
{
	char tmp[4096], path[4096];
	snprintf(tmp, sizeof tmp, "%s/uploaded.tmp", dir);
	snprintf(path, sizeof path, "%s/uploaded", dir);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return tk_error_set(err, "%s: cannot write: %m", tmp);
	size_t n = strlen(ack);
	int ok = write(fd, ack, n) == (ssize_t)n && fsync(fd) == 0;
	ok &= close(fd) == 0;
	if (!ok || rename(tmp, path) != 0)
		return tk_error_set(err, "%s: cannot write: %m", path);
	return 0;
}

/* POST body with retries; on a 2xx the answer's first line is in ack. Returns 0, 1 (4xx) or -1. */
static int post(const char *url, const char *what, const void *body, size_t n, const tk_upload_options *o, char *ack,
                size_t ackn, tk_error *err)
{
	if (tk_store_curl_init() < 0)
		return tk_error_set(err, "%s: cannot start libcurl", url);
	CURL *c = curl_easy_init();
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
	curl_easy_cleanup(c);
	return rc;
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
