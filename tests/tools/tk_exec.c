/*
 * tk_exec — "$TK" for the shell tests that start a fork server (tests/lib.sh: tk_fork_start): runs
 * `tracekit ARGS…` as a child of the server (tests/tools/tk_forkserver.c) instead of starting a
 * sanitized process of its own, and behaves as that tracekit process would: same descriptors,
 * directory, environment, umask, resource limits and ignored/blocked signals; the signals it gets
 * are passed on to the command; it exits with the command's status, or dies of the same signal.
 *
 * It runs the real binary itself (execv of $TK_FORK_REAL, the same process) when there is no server
 * ($TK_FORK_SOCK unset or not answering), for the commands whose process matters to the tests
 * (monitor and serve run children, are signalled, measured and watched by pid; open and upload
 * talk to servers), and when the server refuses (a sanitizer or loader variable set otherwise).
 * Built without sanitizers: it is test plumbing, like the shell, and must cost next to nothing.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tk_fork.h"

extern char **environ;

static const char *real;
static char **args;
static volatile pid_t child;
static int pipe_ignored; /* SIGPIPE as this process was given it (ignored while talking to the server) */

static void __attribute__((noreturn)) run_real(void)
{
	signal(SIGPIPE, pipe_ignored ? SIG_IGN : SIG_DFL);
	args[0] = (char *)real;
	execv(real, args);
	fprintf(stderr, "tk_exec: %s: %s\n", real, strerror(errno));
	_exit(127);
}

static void forward(int sig)
{
	if (child > 0)
		kill(child, sig);
}

struct buf {
	char *p;
	size_t n, cap;
};

static void put(struct buf *b, const char *s)
{
	size_t l = strlen(s) + 1;
	if (b->n + l > b->cap) {
		b->cap = (b->n + l) * 2;
		b->p = realloc(b->p, b->cap);
		if (!b->p)
			run_real();
	}
	memcpy(b->p + b->n, s, l);
	b->n += l;
}

static int read_reply(int s, struct tk_fork_reply *r)
{
	return tk_fork_io(s, r, sizeof *r, 0);
}

int main(int argc, char **argv)
{
	args = argv;
	real = getenv("TK_FORK_REAL");
	if (!real) {
		fprintf(stderr, "tk_exec: TK_FORK_REAL is not set\n");
		return 127;
	}
	const char *path = getenv("TK_FORK_SOCK");
	static const char *const own_process[] = {"monitor", "serve", "open", "upload"};
	struct sigaction pipe_sa;
	pipe_ignored = sigaction(SIGPIPE, NULL, &pipe_sa) == 0 && pipe_sa.sa_handler == SIG_IGN;
	if (!path || argc < 2)
		run_real();
	for (size_t i = 0; i < sizeof own_process / sizeof *own_process; i++)
		if (strcmp(argv[1], own_process[i]) == 0)
			run_real();

	int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	if (s < 0 || strlen(path) >= sizeof a.sun_path)
		run_real();
	strcpy(a.sun_path, path);
	if (connect(s, (struct sockaddr *)&a, sizeof a) != 0)
		run_real();

	struct tk_fork_hdr h;
	memset(&h, 0, sizeof h);
	h.magic = TK_FORK_MAGIC;
	/* every descriptor this process was given (ours are close-on-exec: the socket, the listing) */
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		run_real();
	int fds[TK_FORK_MAXFD];
	for (struct dirent *e; (e = readdir(d));) {
		char *end;
		long fd = strtol(e->d_name, &end, 10);
		if (*end || end == e->d_name || fd == dirfd(d) || fd == s)
			continue;
		if (h.nfd == TK_FORK_MAXFD)
			run_real();
		fds[h.nfd] = (int)fd;
		h.fdno[h.nfd++] = (int)fd;
	}
	closedir(d);
	mode_t m = umask(0);
	umask(m);
	h.umask = m;
	for (int sig = 1; sig < 65; sig++) {
		struct sigaction sa;
		if (sigaction(sig, NULL, &sa) == 0 && sa.sa_handler == SIG_IGN)
			h.sigign |= 1ull << (sig - 1);
	}
	sigset_t blocked;
	sigprocmask(SIG_SETMASK, NULL, &blocked);
	for (int sig = 1; sig < 65; sig++)
		if (sigismember(&blocked, sig) == 1)
			h.sigblock |= 1ull << (sig - 1);
	for (int r = 0; r < RLIM_NLIMITS && r < TK_FORK_NLIMITS; r++) {
		struct rlimit l;
		getrlimit(r, &l);
		h.rlim[r][0] = l.rlim_cur;
		h.rlim[r][1] = l.rlim_max;
	}

	struct buf b = {0};
	char cwd[8192], num[32];
	if (!getcwd(cwd, sizeof cwd))
		run_real();
	put(&b, cwd);
	snprintf(num, sizeof num, "%d", argc);
	put(&b, num);
	put(&b, real);
	for (int i = 1; i < argc; i++)
		put(&b, argv[i]);
	int envc = 0;
	for (char **e = environ; *e; e++)
		envc++;
	snprintf(num, sizeof num, "%d", envc);
	put(&b, num);
	for (char **e = environ; *e; e++)
		put(&b, *e);
	h.len = (uint32_t)b.n;

	char cbuf[CMSG_SPACE(sizeof(int) * TK_FORK_MAXFD)];
	memset(cbuf, 0, sizeof cbuf);
	struct iovec iov = {.iov_base = &h, .iov_len = sizeof h};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
	if (h.nfd) {
		msg.msg_control = cbuf;
		msg.msg_controllen = CMSG_SPACE(sizeof(int) * h.nfd);
		struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * h.nfd);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * h.nfd);
	}
	/* SIGPIPE ignored while talking to the server (the command gets the client's disposition, sent above) */
	signal(SIGPIPE, SIG_IGN);
	if (sendmsg(s, &msg, MSG_NOSIGNAL) != (ssize_t)sizeof h)
		run_real();
	for (size_t off = 0; off < b.n;) {
		ssize_t k = write(s, b.p + off, b.n - off);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			run_real();
		off += (size_t)k;
	}
	free(b.p);

	struct tk_fork_reply r;
	if (read_reply(s, &r) != 0 || r.type == 'E') {
		close(s);
		run_real();
	}
	if (r.type != 'P') {
		fprintf(stderr, "tk_exec: bad reply from %s\n", path);
		return 125;
	}
	child = r.value;
	static const int passed_on[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM};
	for (size_t i = 0; i < sizeof passed_on / sizeof *passed_on; i++) {
		int sig = passed_on[i];
		if ((h.sigign >> (sig - 1)) & 1)
			continue; /* ignored here: the command ignores it too */
		struct sigaction sa = {.sa_handler = forward, .sa_flags = SA_RESTART};
		sigemptyset(&sa.sa_mask);
		sigaction(sig, &sa, NULL);
	}
	if (read_reply(s, &r) != 0 || r.type != 'S') {
		fprintf(stderr, "tk_exec: lost the server at %s while `tracekit %s` ran\n", path, argv[1]);
		return 125;
	}
	int st = r.value;
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st)) {
		int sig = WTERMSIG(st);
		struct rlimit no_core = {0, 0};
		setrlimit(RLIMIT_CORE, &no_core);
		signal(sig, SIG_DFL);
		sigset_t one;
		sigemptyset(&one);
		sigaddset(&one, sig);
		sigprocmask(SIG_UNBLOCK, &one, NULL);
		raise(sig);
		return 128 + sig;
	}
	return 125;
}
