/* The request and replies between tests/tools/tk_exec.c (client) and tk_batch --serve
 * (tests/tools/tk_forkserver.c), on a Unix socket. The request: this header, with the client's
 * open descriptors attached (SCM_RIGHTS, in fdno's order), then len bytes of NUL-terminated
 * strings: the working directory, argc, argv[0..argc-1], envc, the environment. The replies:
 * 'P' with the child's pid, later 'S' with its wait status; or 'E' alone: run tracekit yourself. */
#ifndef TK_FORK_H
#define TK_FORK_H
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#define TK_FORK_MAGIC 0x746b6631u
#define TK_FORK_MAXFD 64
#define TK_FORK_NLIMITS 16

struct tk_fork_hdr {
	uint32_t magic, len, nfd, umask;
	int32_t fdno[TK_FORK_MAXFD], fdflags[TK_FORK_MAXFD];
	uint64_t sigign, sigblock; /* bit s-1: signal s ignored / blocked in the client */
	uint64_t rlim[TK_FORK_NLIMITS][2];
};

struct tk_fork_reply {
	int32_t type, value;
};

/* All n bytes read into (writing 0) or written from (writing 1) buf, across short transfers and
 * EINTR: 0, or -1 on an error or the other end closing first. */
static inline int tk_fork_io(int fd, void *buf, size_t n, int writing)
{
	char *p = buf;
	while (n) {
		ssize_t r = writing ? write(fd, p, n) : read(fd, p, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}
#endif
