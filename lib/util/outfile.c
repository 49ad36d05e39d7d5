#include "util/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/mem.h"

int tk_outfile_open(tk_outfile *o, const char *path, tk_error *err)
{
	memset(o, 0, sizeof *o);
	if (!path || strcmp(path, "-") == 0) {
		o->f = stdout;
		return 0;
	}
	/* A device or FIFO (/dev/stdout, /dev/null, a named pipe) cannot be replaced by a rename and
	 * has no half-written state to protect: write straight into it. */
	struct stat st;
	int exists = stat(path, &st) == 0;
	if (exists && S_ISDIR(st.st_mode))
		return tk_error_set(err, "%s: is a directory", path);
	if (exists && !S_ISREG(st.st_mode)) {
		o->f = fopen(path, "we");
		if (!o->f)
			return tk_error_set(err, "%s: cannot write: %s", path, strerror(errno));
		o->path = tk_xstrdup(path);
		return 0;
	}
	size_t n = strlen(path);
	o->path = tk_xstrdup(path);
	o->tmp = tk_xmalloc(n + 16);
	memcpy(o->tmp, path, n);
	/* PATH.tmp.XXXXXX created with O_EXCL (never an existing file or a symlink's target), mode 0666
	 * less the umask as a plain fopen gives; another name when taken. fopen "x" instead of mkostemp
	 * + umask + fchmod + fdopen: 3 system calls a file instead of 7, which a batch of 10,000
	 * reports notices. */
	static const char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
	static uint64_t seq, salt;
	if (!__atomic_load_n(&salt, __ATOMIC_RELAXED)) /* once a process (a race only writes the same) */
		__atomic_store_n(&salt, ((uint64_t)getpid() << 29) ^ (uint64_t)time(NULL) ^ 1, __ATOMIC_RELAXED);
	int e = 0;
	for (int tries = 0; tries < 100; tries++) {
		uint64_t x = (__atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED) + 1) * 0x9E3779B97F4A7C15ull;
		x ^= __atomic_load_n(&salt, __ATOMIC_RELAXED) ^ (uint64_t)(uintptr_t)o->tmp;
		x *= 0xBF58476D1CE4E5B9ull;
		memcpy(o->tmp + n, ".tmp.", 5);
		for (int i = 0; i < 6; i++, x >>= 6)
			o->tmp[n + 5 + i] = digits[x & 63];
		o->tmp[n + 11] = 0;
		o->f = fopen(o->tmp, "wxe");
		if (o->f || (e = errno) != EEXIST)
			break;
	}
	if (!o->f) {
		free(o->path);
		free(o->tmp);
		memset(o, 0, sizeof *o);
		return tk_error_set(err, "%s: cannot write: %s", path, strerror(e ? e : EEXIST));
	}
	return 0;
}

static void release(tk_outfile *o)
{
	free(o->path);
	free(o->tmp);
	memset(o, 0, sizeof *o);
}

int tk_outfile_commit(tk_outfile *o, tk_error *err)
{
	if (!o->f)
		return tk_error_set(err, "output: not open");
	if (!o->tmp) {
		int bad = fflush(o->f) != 0 || ferror(o->f);
		int e = errno ? errno : EIO;
		if (o->f != stdout && fclose(o->f) != 0 && !bad) {
			bad = 1;
			e = errno ? errno : EIO;
		}
		o->f = NULL;
		if (bad)
			tk_error_set(err, "%s: write failed: %s", o->path ? o->path : "standard output", strerror(e));
		release(o);
		return bad ? -1 : 0;
	}
	int bad = fflush(o->f) != 0 || ferror(o->f) || (!o->nosync && fsync(fileno(o->f)) != 0);
	int e = errno ? errno : EIO;
	if (fclose(o->f) != 0 && !bad) {
		bad = 1;
		e = errno ? errno : EIO;
	}
	o->f = NULL;
	if (!bad && rename(o->tmp, o->path) != 0) {
		bad = 1;
		e = errno;
	}
	if (bad) {
		unlink(o->tmp);
		tk_error_set(err, "%s: write failed: %s", o->path, strerror(e));
		release(o);
		return -1;
	}
	release(o);
	return 0;
}

void tk_outfile_abort(tk_outfile *o)
{
	if (o->f && o->f != stdout)
		fclose(o->f);
	else if (o->f)
		fflush(o->f);
	if (o->tmp)
		unlink(o->tmp);
	release(o);
}
