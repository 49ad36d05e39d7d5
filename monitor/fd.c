/*
 * Descriptors the monitor keeps open inside its host. A program may close every descriptor it did
 * not open (daemons, sandboxes, closefrom()) and open or dup2() its own files onto those numbers;
 * a monitor that then writes, seeks or reads through its old numbers would corrupt the program's
 * files. So every kept descriptor lives high (F_DUPFD_CLOEXEC from half the descriptor limit, away
 * from the low numbers a program gets next), remembers the device and inode it was opened on, and
 * is checked (fstat) before each use and before it is closed: a descriptor that is no longer ours
 * is forgotten, never used or closed, and counted so the session can say so.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

static _Atomic unsigned lost;

unsigned tkm_fd_lost_count(void)
{
	return atomic_load(&lost);
}

static int high_base(void)
{
	static _Atomic int base;
	int b = atomic_load(&base);
	if (b)
		return b;
	struct rlimit rl;
	b = 512;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		if (rl.rlim_cur >= 2048)
			b = 1024; /* stays below FD_SETSIZE's neighbours only when the limit is small */
		else if (rl.rlim_cur >= 16)
			b = (int)(rl.rlim_cur / 2);
		else
			b = 3;
	}
	atomic_store(&base, b);
	return b;
}

static bool same(int fd, const struct stat *a)
{
	struct stat st;
	return fstat(fd, &st) == 0 && st.st_dev == a->st_dev && st.st_ino == a->st_ino;
}

int tkm_fd_adopt(tkm_fd *f, int fd)
{
	f->fd = -1;
	if (fd < 0)
		return -1;
	struct stat st;
	if (fstat(fd, &st) != 0) {
		close(fd);
		return -1;
	}
	int base = high_base();
	if (fd < base) {
		int h = fcntl(fd, F_DUPFD_CLOEXEC, base);
		if (h < 0)
			h = fcntl(fd, F_DUPFD_CLOEXEC, base / 2);
		if (h >= 0) {
			/* the low number may already have been closed and reused by another thread of the
			 * program: close it only if it still is our file */
			if (same(fd, &st))
				close(fd);
			fd = h;
		}
	}
	f->fd = fd;
	f->dev = (uint64_t)st.st_dev;
	f->ino = (uint64_t)st.st_ino;
	return 0;
}

int tkm_fd_open(tkm_fd *f, const char *path, int flags, unsigned mode)
{
	int fd;
	do
		fd = open(path, flags | O_CLOEXEC, (mode_t)mode);
	while (fd < 0 && errno == EINTR);
	return tkm_fd_adopt(f, fd);
}

bool tkm_fd_ours(tkm_fd *f)
{
	if (f->fd < 0)
		return false;
	struct stat st;
	if (fstat(f->fd, &st) == 0 && (uint64_t)st.st_dev == f->dev && (uint64_t)st.st_ino == f->ino)
		return true;
	f->fd = -1; /* closed or replaced by the program: forget it, never close it */
	atomic_fetch_add(&lost, 1);
	return false;
}

void tkm_fd_close(tkm_fd *f)
{
	if (f->fd >= 0 && tkm_fd_ours(f))
		close(f->fd);
	f->fd = -1;
}

ssize_t tkm_fd_read_small(const char *path, char *buf, size_t n)
{
	tkm_fd f;
	if (n == 0 || tkm_fd_open(&f, path, O_RDONLY, 0) != 0)
		return -1;
	ssize_t r = -1;
	if (tkm_fd_ours(&f))
		r = read(f.fd, buf, n - 1);
	tkm_fd_close(&f);
	if (r < 0)
		return -1;
	buf[r] = 0;
	return r;
}
