/*
 * tk_input — a byte stream over a file, standard input or memory, gunzipping transparently.
 *
 * Readers stream, so the stream never holds more than one raw buffer and one inflate window.
 * Progress is reported in raw bytes because that is what the total (the file size) measures.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include "read/internal.h"
#include "tracekit/read.h"
#include "util/mem.h"

#define RAW_BUF (256 * 1024)

struct tk_input {
	char *name;
	int fd;     /* -1 for memory */
	int own_fd; /* close on tk_input_close */
	/* raw bytes: either a file buffer or the caller's memory */
	const unsigned char *mem;
	size_t mem_len, mem_pos;
	unsigned char *raw;
	size_t raw_cap; /* bytes at raw (files: RAW_BUF, or less for a smaller regular file) */
	size_t raw_len, raw_pos;
	int raw_eof;
	uint64_t consumed, total;
	/* gzip */
	int gzip;
	int z_init;
	int z_member_done; /* the last inflate() returned Z_STREAM_END */
	z_stream z;
	/* sniff head: decompressed bytes already produced but not yet handed out */
	unsigned char head[TK_INPUT_HEAD];
	size_t head_len, head_pos;
	int started; /* tk_input_read has been called */
	int (*check)(void *ctx, tk_error *err);
	void *check_ctx;
};

/* Make raw bytes available; returns 0, or -1 on I/O error. Sets raw_eof at the end. */
static int raw_fill(tk_input *in, tk_error *err)
{
	if (in->fd < 0) {
		if (in->raw_pos == in->raw_len) {
			in->raw = (unsigned char *)in->mem + in->mem_pos;
			size_t n = in->mem_len - in->mem_pos;
			if (n > RAW_BUF)
				n = RAW_BUF;
			in->raw_len = n;
			in->raw_pos = 0;
			in->mem_pos += n;
			in->consumed += n;
			if (!n)
				in->raw_eof = 1;
		}
		return 0;
	}
	if (in->raw_pos < in->raw_len || in->raw_eof)
		return 0;
	for (;;) {
		ssize_t r = read(in->fd, in->raw, in->raw_cap);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return tk_error_set(err, "%s: read error: %s", in->name, strerror(errno));
		in->raw_len = (size_t)r;
		in->raw_pos = 0;
		in->consumed += (uint64_t)r;
		if (r == 0)
			in->raw_eof = 1;
		return 0;
	}
}

/* Read decompressed (or plain) bytes, bypassing the head buffer. */
static ptrdiff_t read_body(tk_input *in, unsigned char *buf, size_t n, tk_error *err)
{
	if (!n)
		return 0;
	if (!in->gzip) {
		if (raw_fill(in, err) < 0)
			return -1;
		size_t avail = in->raw_len - in->raw_pos;
		if (avail > n)
			avail = n;
		memcpy(buf, in->raw + in->raw_pos, avail);
		in->raw_pos += avail;
		return (ptrdiff_t)avail;
	}
	size_t produced = 0;
	while (produced == 0) {
		if (raw_fill(in, err) < 0)
			return -1;
		if (in->raw_pos == in->raw_len) {
			if (!in->z_member_done)
				return tk_error_set(err, "%s: truncated gzip stream (ends after %llu compressed bytes)",
				                    in->name, (unsigned long long)in->consumed);
			return 0;
		}
		if (in->z_member_done) {
			/* Another gzip member follows (as `cat a.gz b.gz` makes); anything else after a complete
			 * member is trailing junk, which gzip(1) also rejects. */
			if (in->raw[in->raw_pos] != 0x1f)
				return tk_error_set(err, "%s: trailing bytes after the gzip stream", in->name);
			inflateReset(&in->z);
			in->z_member_done = 0;
		}
		in->z.next_in = in->raw + in->raw_pos;
		in->z.avail_in = (uInt)(in->raw_len - in->raw_pos);
		in->z.next_out = buf;
		in->z.avail_out = (uInt)(n > (1u << 30) ? (1u << 30) : n);
		uInt before_in = in->z.avail_in, before_out = in->z.avail_out;
		int rc = inflate(&in->z, Z_NO_FLUSH);
		in->raw_pos += before_in - in->z.avail_in;
		produced = before_out - in->z.avail_out;
		if (rc == Z_STREAM_END) {
			in->z_member_done = 1;
		} else if (rc != Z_OK && rc != Z_BUF_ERROR) {
			return tk_error_set(err, "%s: corrupt gzip data near compressed offset %llu: %s", in->name,
			                    (unsigned long long)(in->consumed - (in->raw_len - in->raw_pos)),
			                    in->z.msg ? in->z.msg : "inflate failed");
		}
	}
	return (ptrdiff_t)produced;
}

static tk_input *input_start(tk_input *in, tk_error *err)
{
	/* Peek the raw bytes for the gzip magic, then fill the sniff head from the decoded stream. */
	if (raw_fill(in, err) < 0)
		goto fail;
	/* A pipe may deliver a single byte first; the magic needs two. */
	if (in->fd >= 0 && in->raw_len - in->raw_pos == 1 && !in->raw_eof) {
		ssize_t r;
		do
			r = read(in->fd, in->raw + in->raw_len, in->raw_cap - in->raw_len);
		while (r < 0 && errno == EINTR);
		if (r < 0) {
			tk_error_set(err, "%s: read error: %s", in->name, strerror(errno));
			goto fail;
		}
		in->raw_len += (size_t)r;
		in->consumed += (uint64_t)r;
	}
	if (in->raw_len - in->raw_pos >= 2 && in->raw[in->raw_pos] == 0x1f && in->raw[in->raw_pos + 1] == 0x8b) {
		in->gzip = 1;
		memset(&in->z, 0, sizeof in->z);
		if (inflateInit2(&in->z, 15 + 16) != Z_OK) {
			tk_error_set(err, "%s: cannot initialise zlib", in->name);
			goto fail;
		}
		in->z_init = 1;
	}
	while (in->head_len < TK_INPUT_HEAD) {
		ptrdiff_t r = read_body(in, in->head + in->head_len, TK_INPUT_HEAD - in->head_len, err);
		if (r < 0)
			goto fail;
		if (r == 0)
			break;
		in->head_len += (size_t)r;
	}
	return in;
fail:
	tk_input_close(in);
	return NULL;
}

tk_input *tk_input_open(const char *path, tk_error *err)
{
	tk_input *in = tk_xcalloc(1, sizeof *in);
	if (strcmp(path, "-") == 0) {
		in->name = tk_xstrdup("<stdin>");
		in->fd = 0;
	} else {
		in->name = tk_xstrdup(path);
		in->fd = open(path, O_RDONLY | O_CLOEXEC);
		if (in->fd < 0) {
			tk_error_set(err, "%s: cannot open: %s", path, strerror(errno));
			in->fd = -2; /* nothing to close, not memory */
			free(in->name);
			free(in);
			return NULL;
		}
		in->own_fd = 1;
	}
	struct stat st;
	if (fstat(in->fd, &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			tk_error_set(err, "%s: is a directory", in->name);
			tk_input_close(in);
			return NULL;
		}
		if (S_ISREG(st.st_mode))
			in->total = (uint64_t)st.st_size;
	}
	/* a small regular file (a batch of 10,000 reports of 10 kB each) gets a buffer its size, not
	 * 256 kB: no allocation near the mmap threshold (and its unmapping) per input */
	in->raw_cap = RAW_BUF;
	if (in->total && in->total + 1 < RAW_BUF)
		in->raw_cap = in->total + 1 < 4096 ? 4096 : (size_t)in->total + 1;
	in->raw = tk_xmalloc(in->raw_cap);
	return input_start(in, err);
}

tk_input *tk_input_open_mem(const void *data, size_t n, const char *name, tk_error *err)
{
	tk_input *in = tk_xcalloc(1, sizeof *in);
	in->name = tk_xstrdup(name ? name : "<memory>");
	in->fd = -1;
	in->mem = data ? data : (const void *)""; /* NULL + 0 would be undefined in raw_fill */
	in->mem_len = data ? n : 0;
	in->total = n;
	return input_start(in, err);
}

int tk_input_in_memory(const tk_input *in)
{
	return in->fd < 0;
}

void tk_input_close(tk_input *in)
{
	if (!in)
		return;
	if (in->z_init)
		inflateEnd(&in->z);
	if (in->own_fd && in->fd >= 0)
		close(in->fd);
	if (in->fd != -1) /* file streams own their raw buffer */
		free(in->raw);
	free(in->name);
	free(in);
}

void tk_input_set_check(tk_input *in, int (*check)(void *ctx, tk_error *err), void *ctx)
{
	in->check = check;
	in->check_ctx = ctx;
}

const char *tk_input_map(tk_input *in, size_t *n)
{
	if (in->started || in->gzip || !in->own_fd || in->fd < 0 || !in->total || in->total > SIZE_MAX / 2)
		return NULL;
	struct stat st;
	if (fstat(in->fd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size != in->total)
		return NULL;
	tk_error err;
	if (in->check && in->check(in->check_ctx, &err) != 0)
		return NULL; /* the next tk_input_read reports it */
	void *p = mmap(NULL, (size_t)in->total, PROT_READ, MAP_PRIVATE, in->fd, 0);
	if (p == MAP_FAILED)
		return NULL;
	in->started = 1;
	in->head_pos = in->head_len;
	in->raw_pos = in->raw_len;
	in->raw_eof = 1;
	in->consumed = in->total;
	*n = (size_t)in->total;
	return p;
}

ptrdiff_t tk_input_read(tk_input *in, void *buf, size_t n, tk_error *err)
{
	if (in->check && in->check(in->check_ctx, err) != 0)
		return -1;
	in->started = 1;
	if (in->head_pos < in->head_len) {
		size_t k = in->head_len - in->head_pos;
		if (k > n)
			k = n;
		memcpy(buf, in->head + in->head_pos, k);
		in->head_pos += k;
		return (ptrdiff_t)k;
	}
	return read_body(in, buf, n, err);
}

const unsigned char *tk_input_head(const tk_input *in, size_t *n)
{
	*n = in->started ? 0 : in->head_len;
	return in->head;
}

const char *tk_input_name(const tk_input *in)
{
	return in->name;
}

uint64_t tk_input_consumed(const tk_input *in)
{
	return in->consumed;
}

uint64_t tk_input_total(const tk_input *in)
{
	return in->total;
}

int tk_input_is_gzip(const tk_input *in)
{
	return in->gzip;
}
