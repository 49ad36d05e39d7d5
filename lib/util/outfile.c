#include "util/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return tk_error_set(err, "%s: is a directory", path);
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
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
	memcpy(o->tmp + n, ".tmp.XXXXXX", 12);
	int fd = mkostemp(o->tmp, O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		free(o->path);
		free(o->tmp);
		memset(o, 0, sizeof *o);
		return tk_error_set(err, "%s: cannot write: %s", path, strerror(e));
	}
	/* mkostemp creates 0600; give the file the mode a plain fopen would (0666 & ~umask). */
	mode_t um = umask(0);
	umask(um);
	(void)fchmod(fd, 0666 & ~um);
	o->f = fdopen(fd, "w");
	if (!o->f) {
		int e = errno;
		close(fd);
		tk_outfile_abort(o);
		return tk_error_set(err, "%s: cannot write: %s", path, strerror(e));
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
