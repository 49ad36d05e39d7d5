/*
 * tk_batch --serve SOCKET: a fork server for the shell tests, so that a test asking tracekit a
 * hundred questions does not pay a hundred sanitized start-ups (under ASan+UBSan each tracekit
 * process costs ~0.17 s of CPU before it does anything: loading, relocating and initialising the
 * sanitizer runtimes and a dozen libraries, most of a small check's time).
 *
 * The server starts once per test script (tests/lib.sh: tk_fork_start), initialised like any
 * tracekit process, and then only waits. tests/tools/tk_exec.c (the client, which the script runs
 * as "$TK") sends it its command line, working directory, environment, umask, resource limits,
 * ignored and blocked signals and every open file descriptor (SCM_RIGHTS); the server forks a child
 * that takes all of these on, runs tracekit's own main() (cli/main.c compiled with main renamed,
 * as for tk_batch) and exits with its status: each command is still a process of its own, with its
 * own exit, its own leak check at exit and its own sanitizer reports on its own stderr. The client
 * forwards the signals it gets to that child and exits with the child's status (or dies of the
 * same signal).
 *
 * A request whose sanitizer or loader environment (ASAN_OPTIONS, LD_PRELOAD, …) differs from the
 * server's is refused ("run it yourself"): those are read when a process starts, so the client then
 * runs the real tracekit binary itself.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tk_fork.h"

int tk_batch_tracekit_main(int argc, char **argv);
/* LeakSanitizer's interface, when the server is built with it (weak: absent in a plain build) */
int __lsan_do_recoverable_leak_check(void) __attribute__((weak));

static int chld_pipe[2] = {-1, -1};
static struct sigaction initial[NSIG];

static void on_chld(int sig)
{
	int e = errno;
	(void)sig;
	if (write(chld_pipe[1], "c", 1) < 0) {
		/* the pipe is full: a wake-up is pending already */
	}
	errno = e;
}

static int read_full(int fd, void *buf, size_t n)
{
	return tk_fork_io(fd, buf, n, 0);
}

static int write_full(int fd, const void *buf, size_t n)
{
	return tk_fork_io(fd, (void *)buf, n, 1);
}

static void reply(int conn, char type, int32_t value)
{
	struct tk_fork_reply r = {.type = type, .value = value};
	(void)write_full(conn, &r, sizeof r);
}

/* the request's strings: NUL-terminated, one after the other */
struct req {
	struct tk_fork_hdr h;
	int fds[TK_FORK_MAXFD]; /* received, at the server's numbers */
	char *data;
	char **argv, **envp;
	int argc, envc;
	const char *cwd;
};

static char *next_str(char **p, char *end)
{
	char *s = *p, *z = s < end ? memchr(s, '\0', (size_t)(end - s)) : NULL;
	if (!z)
		return NULL;
	*p = z + 1;
	return s;
}

static int read_request(int conn, struct req *q)
{
	memset(q, 0, sizeof *q);
	char cbuf[CMSG_SPACE(sizeof(int) * TK_FORK_MAXFD)];
	struct iovec iov = {.iov_base = &q->h, .iov_len = sizeof q->h};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
	ssize_t r;
	do
		r = recvmsg(conn, &m, MSG_CMSG_CLOEXEC | MSG_WAITALL);
	while (r < 0 && errno == EINTR);
	int got = 0;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			int n = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
			for (int i = 0; i < n && got < TK_FORK_MAXFD; i++)
				memcpy(&q->fds[got++], CMSG_DATA(c) + i * sizeof(int), sizeof(int));
		}
	if (r != (ssize_t)sizeof q->h || q->h.magic != TK_FORK_MAGIC || q->h.nfd > TK_FORK_MAXFD ||
	    (int)q->h.nfd != got || q->h.len > (64u << 20)) {
		for (int i = 0; i < got; i++)
			close(q->fds[i]);
		return -1;
	}
	q->data = malloc(q->h.len + 1);
	if (!q->data || read_full(conn, q->data, q->h.len) < 0)
		goto bad;
	q->data[q->h.len] = '\0';
	char *p = q->data, *end = q->data + q->h.len, *s;
	if (!(q->cwd = next_str(&p, end)) || !(s = next_str(&p, end)))
		goto bad;
	q->argc = atoi(s);
	if (q->argc < 1 || q->argc > 1 << 20 || !(q->argv = calloc((size_t)q->argc + 1, sizeof *q->argv)))
		goto bad;
	for (int i = 0; i < q->argc; i++)
		if (!(q->argv[i] = next_str(&p, end)))
			goto bad;
	if (!(s = next_str(&p, end)))
		goto bad;
	q->envc = atoi(s);
	if (q->envc < 0 || q->envc > 1 << 20 || !(q->envp = calloc((size_t)q->envc + 1, sizeof *q->envp)))
		goto bad;
	for (int i = 0; i < q->envc; i++)
		if (!(q->envp[i] = next_str(&p, end)))
			goto bad;
	return 0;
bad:
	for (unsigned i = 0; i < q->h.nfd; i++)
		close(q->fds[i]);
	free(q->data);
	free(q->argv);
	free(q->envp);
	memset(q, 0, sizeof *q);
	return -1;
}

static void free_request(struct req *q)
{
	free(q->data);
	free(q->argv);
	free(q->envp);
}

/* variables read when a process starts: a request that sets them otherwise runs tracekit itself */
static const char *const startup_vars[] = {"ASAN_OPTIONS",   "UBSAN_OPTIONS",   "LSAN_OPTIONS",
                                           "LD_PRELOAD",     "LD_LIBRARY_PATH", "LD_BIND_NOW",
                                           "GLIBC_TUNABLES", "MALLOC_CHECK_",   "MALLOC_PERTURB_"};

static int same_startup_env(const struct req *q)
{
	for (size_t v = 0; v < sizeof startup_vars / sizeof *startup_vars; v++) {
		const char *mine = getenv(startup_vars[v]), *theirs = NULL;
		size_t n = strlen(startup_vars[v]);
		for (int i = 0; i < q->envc; i++)
			if (strncmp(q->envp[i], startup_vars[v], n) == 0 && q->envp[i][n] == '=')
				theirs = q->envp[i] + n + 1;
		if ((mine == NULL) != (theirs == NULL) || (mine && strcmp(mine, theirs) != 0))
			return 0;
	}
	return 1;
}

static int is_target(const struct req *q, int fd)
{
	for (unsigned i = 0; i < q->h.nfd; i++)
		if (q->h.fdno[i] == fd)
			return 1;
	return 0;
}

/* The child: become the client's process (descriptors, directory, environment, limits, signals),
 * then run tracekit. Never returns. */
static void __attribute__((noreturn)) become(struct req *q)
{
	/* the received descriptors out of the way first, then at the client's numbers */
	int high[TK_FORK_MAXFD];
	for (unsigned i = 0; i < q->h.nfd; i++) {
		high[i] = fcntl(q->fds[i], F_DUPFD_CLOEXEC, 1024);
		if (high[i] < 0)
			_exit(126);
		close(q->fds[i]);
	}
	for (unsigned i = 0; i < q->h.nfd; i++)
		if (dup2(high[i], q->h.fdno[i]) < 0)
			_exit(126);
	/* every other descriptor closed (also 0, 1 and 2 when the client had them closed) */
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		_exit(126);
	int dfd = dirfd(d), closing[4096], nclose = 0;
	for (struct dirent *e; (e = readdir(d));) {
		char *endp;
		long fd = strtol(e->d_name, &endp, 10);
		if (*endp || endp == e->d_name || fd == dfd || is_target(q, (int)fd))
			continue;
		if (nclose < 4096)
			closing[nclose++] = (int)fd;
	}
	closedir(d);
	for (int i = 0; i < nclose; i++)
		close(closing[i]);
	for (unsigned i = 0; i < q->h.nfd; i++) {
		int fl = fcntl(q->h.fdno[i], F_GETFD);
		if (fl >= 0 && (q->h.fdflags[i] & FD_CLOEXEC) == 0)
			fcntl(q->h.fdno[i], F_SETFD, fl & ~FD_CLOEXEC);
	}

	for (int r = 0; r < RLIM_NLIMITS && r < TK_FORK_NLIMITS; r++) {
		struct rlimit cur, want = {.rlim_cur = q->h.rlim[r][0], .rlim_max = q->h.rlim[r][1]};
		if (getrlimit(r, &cur) == 0 && (cur.rlim_cur != want.rlim_cur || cur.rlim_max != want.rlim_max) &&
		    setrlimit(r, &want) != 0) {
			dprintf(2, "tk_batch --serve: cannot take on resource limit %d\n", r);
			_exit(126);
		}
	}
	umask((mode_t)q->h.umask);
	if (chdir(q->cwd) != 0) {
		dprintf(2, "tk_batch --serve: cannot enter %s\n", q->cwd);
		_exit(126);
	}
	clearenv();
	for (int i = 0; i < q->envc; i++)
		putenv(q->envp[i]);
	/* signals: the sanitizers' own handlers stay; the others as the client has them */
	for (int s = 1; s < NSIG && s < 65; s++) {
		if (s == SIGKILL || s == SIGSTOP)
			continue;
		if (initial[s].sa_handler != SIG_DFL && initial[s].sa_handler != SIG_IGN)
			sigaction(s, &initial[s], NULL);
		else
			signal(s, (q->h.sigign >> (s - 1)) & 1 ? SIG_IGN : SIG_DFL);
	}
	sigset_t mask;
	sigemptyset(&mask);
	for (int s = 1; s < 65; s++)
		if ((q->h.sigblock >> (s - 1)) & 1)
			sigaddset(&mask, s);
	sigprocmask(SIG_SETMASK, &mask, NULL);
	exit(tk_batch_tracekit_main(q->argc, q->argv));
}

struct child {
	pid_t pid;
	int conn;
};

int tk_forkserver(const char *path)
{
	pid_t parent = getppid();
	/* the server ends with the test script that started it */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != parent)
		return 0;
	for (int s = 1; s < NSIG; s++)
		sigaction(s, NULL, &initial[s]);
	if (pipe2(chld_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
		return perror("pipe"), 2;
	struct sigaction sa = {.sa_handler = on_chld, .sa_flags = SA_RESTART | SA_NOCLDSTOP};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGCHLD, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	int ls = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	if (ls < 0 || strlen(path) >= sizeof a.sun_path)
		return fprintf(stderr, "tk_batch --serve: bad socket %s\n", path), 2;
	strcpy(a.sun_path, path);
	char tmp[sizeof a.sun_path + 8];
	/* bound under another name and renamed: the socket's path appears when it accepts */
	snprintf(tmp, sizeof tmp, "%s.new", path);
	struct sockaddr_un b = a;
	if (strlen(tmp) >= sizeof b.sun_path)
		return fprintf(stderr, "tk_batch --serve: socket path too long: %s\n", path), 2;
	strcpy(b.sun_path, tmp);
	unlink(tmp);
	/* One leak check now, before any child: LeakSanitizer's check at each child's exit reads ~12 MB
	 * of the sanitizer runtimes' own zero pages, ~3000 page faults (about half a small command's
	 * CPU) when each child faulted them in anew; read once here, every child inherits them mapped. */
	if (__lsan_do_recoverable_leak_check)
		__lsan_do_recoverable_leak_check();
	if (bind(ls, (struct sockaddr *)&b, sizeof b) != 0 || listen(ls, 64) != 0 || rename(tmp, path) != 0)
		return fprintf(stderr, "tk_batch --serve: %s: %s\n", path, strerror(errno)), 2;

	struct child *kids = NULL;
	size_t nkids = 0, cap = 0;
	for (;;) {
		struct pollfd *pf = calloc(nkids + 2, sizeof *pf);
		if (!pf)
			return 2;
		pf[0] = (struct pollfd){.fd = ls, .events = POLLIN};
		pf[1] = (struct pollfd){.fd = chld_pipe[0], .events = POLLIN};
		for (size_t i = 0; i < nkids; i++)
			pf[i + 2] = (struct pollfd){.fd = kids[i].conn, .events = POLLIN};
		int n = poll(pf, nkids + 2, -1);
		if (n < 0 && errno != EINTR) {
			free(pf);
			return 2;
		}
		/* a client gone before its command ended (killed): the command goes too */
		for (size_t i = 0; n > 0 && i < nkids; i++)
			if (pf[i + 2].revents && kids[i].conn >= 0) {
				kill(kids[i].pid, SIGKILL);
				close(kids[i].conn);
				kids[i].conn = -1;
			}
		int accepting = n > 0 && (pf[0].revents & POLLIN);
		free(pf);
		if (n > 0) {
			char drain[64];
			while (read(chld_pipe[0], drain, sizeof drain) > 0) {
			}
			int st;
			pid_t p;
			while ((p = waitpid(-1, &st, WNOHANG)) > 0)
				for (size_t i = 0; i < nkids; i++)
					if (kids[i].pid == p) {
						if (kids[i].conn >= 0) {
							reply(kids[i].conn, 'S', st);
							close(kids[i].conn);
						}
						kids[i] = kids[--nkids];
						break;
					}
		}
		if (!accepting)
			continue;
		int conn = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
		if (conn < 0)
			continue;
		struct req q;
		if (read_request(conn, &q) != 0) {
			close(conn);
			continue;
		}
		if (!same_startup_env(&q)) {
			reply(conn, 'E', 0);
			close(conn);
			for (unsigned i = 0; i < q.h.nfd; i++)
				close(q.fds[i]);
			free_request(&q);
			continue;
		}
		if (nkids == cap) {
			cap = cap ? cap * 2 : 16;
			struct child *k = realloc(kids, cap * sizeof *kids);
			if (!k)
				return 2;
			kids = k;
		}
		pid_t pid = fork();
		if (pid == 0) {
			close(ls);
			close(chld_pipe[0]);
			close(chld_pipe[1]);
			close(conn);
			for (size_t i = 0; i < nkids; i++)
				if (kids[i].conn >= 0)
					close(kids[i].conn);
			free(kids);
			become(&q);
		}
		for (unsigned i = 0; i < q.h.nfd; i++)
			close(q.fds[i]);
		free_request(&q);
		if (pid < 0) {
			reply(conn, 'E', 0);
			close(conn);
			continue;
		}
		reply(conn, 'P', pid);
		kids[nkids++] = (struct child){.pid = pid, .conn = conn};
	}
}
