/* tracekit monitor — run a program with libtracekit-monitor preloaded, then summarise its records. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "analysis.h"
#include "tracekit/read.h"
#include "tracekit/store.h"

TK_COMMAND(monitor, "run a program under the CPU-load monitor (LD_PRELOAD), then list its records")

static const struct opt {
	const char *name, *env;
	int integer; /* otherwise a percentage */
} opts[] = {
    {"--cpu-threshold", "TK_MONITOR_CPU_THRESHOLD", 0},  {"--thread-threshold", "TK_MONITOR_THREAD_THRESHOLD", 0},
    {"--cpu-interval", "TK_MONITOR_CPU_INTERVAL_MS", 1}, {"--cpu-high-interval", "TK_MONITOR_CPU_HIGH_INTERVAL_MS", 1},
    {"--cpu-duration", "TK_MONITOR_CPU_DURATION_MS", 1}, {"--persist-interval", "TK_MONITOR_PERSIST_INTERVAL_MS", 1},
    {"--max-nodes", "TK_MONITOR_MAX_NODES", 1},          {"--max-frames", "TK_MONITOR_MAX_FRAMES", 1},
};

static int valid_value(const char *v, int integer)
{
	char *end;
	errno = 0;
	if (integer) {
		unsigned long long x = strtoull(v, &end, 10);
		return end != v && !*end && !errno && x > 0 && x <= UINT32_MAX && v[0] != '-';
	}
	double d = strtod(v, &end);
	return end != v && !*end && isfinite(d) && d > 0 && d <= 100000;
}

/* ids 1…8 are opts[id - 1] */
enum { OPT_DIR = 20, OPT_LIB, OPT_QUIET, OPT_UPLOAD, OPT_TOKEN_FILE, OPT_CMD };

static const tk_cli_option options[] = {
    TK_OPT_SECTION(
        "options (each sets the environment variable in brackets; unset ones keep the library default or the value "
        "already in the environment)"),
    TK_OPT_VALUE(OPT_DIR, "--dir", "-o", "DIR",
                 "session directory (default ./tracekit-session-YYYYmmdd-HHMMSS) [TK_MONITOR_DIR]"),
    TK_OPT_VALUE(1, "--cpu-threshold", NULL, "PCT",
                 "high load starts at PCT percent of one core (80) [TK_MONITOR_CPU_THRESHOLD]"),
    TK_OPT_VALUE(2, "--thread-threshold", NULL, "PCT",
                 "sample threads above PCT percent of the process CPU (15) [TK_MONITOR_THREAD_THRESHOLD]"),
    TK_OPT_VALUE(3, "--cpu-interval", NULL, "MS",
                 "CPU check period at normal load (1000) [TK_MONITOR_CPU_INTERVAL_MS]"),
    TK_OPT_VALUE(4, "--cpu-high-interval", NULL, "MS",
                 "sampling period during high load (300) [TK_MONITOR_CPU_HIGH_INTERVAL_MS]"),
    TK_OPT_VALUE(5, "--cpu-duration", NULL, "MS",
                 "high load must last MS to make a record (60000) [TK_MONITOR_CPU_DURATION_MS]"),
    TK_OPT_VALUE(6, "--persist-interval", NULL, "MS",
                 "rewrite a living record every MS (5000) [TK_MONITOR_PERSIST_INTERVAL_MS]"),
    TK_OPT_VALUE(7, "--max-nodes", NULL, "N", "bound on tree nodes per record (4096) [TK_MONITOR_MAX_NODES]"),
    TK_OPT_VALUE(8, "--max-frames", NULL, "N", "frames per stack (64, at most 128) [TK_MONITOR_MAX_FRAMES]"),
    TK_OPT_VALUE(OPT_LIB, "--lib", NULL, "PATH", "the monitor library to preload [TK_MONITOR_LIB]"),
    TK_OPT_FLAG(OPT_QUIET, "--quiet", "-q", "no summary at the end"),
    TK_OPT_VALUE(
        OPT_UPLOAD, "--upload", NULL, "URL",
        "send each finished record to `tracekit serve --ingest` at URL as the library does (DIR/outbox, retried "
        "with back-off, each kept on disk until acknowledged); what is left when CMD ends is sent then, and the "
        "session is marked uploaded once the outbox is empty [TK_MONITOR_UPLOAD_URL]"),
    TK_OPT_VALUE(OPT_TOKEN_FILE, "--token-file", NULL, "FILE",
                 "the bearer token for --upload (required with it) [TK_MONITOR_UPLOAD_TOKEN_FILE]"),
    TK_OPT_OPERAND(OPT_CMD, "-- CMD [ARGS...]",
                   "the program to run and its arguments, after --: they are never taken as options"),
    TK_OPT_END,
};

const tk_cli_command tk_cli_command_monitor = {
    .name = "monitor",
    .usage = "tracekit monitor [options] -- CMD [ARGS...]",
    .about = "Runs CMD with libtracekit-monitor.so preloaded (found next to the tracekit binary, or at\n"
             "$TK_MONITOR_LIB), waits for it and exits with its status (128+N if killed by signal N). The\n"
             "monitor writes CPU high-load records (MTHawkeye's algorithm) to a session directory; at the end\n"
             "tracekit says where and how many. Read them with `tracekit records DIR` (list, --tree KEY) or\n"
             "`tracekit tree DIR` / `tracekit top DIR` (one thread per record). SIGTERM and SIGHUP sent to\n"
             "tracekit are passed on to CMD; ^C and ^\\ reach CMD from the terminal. Either way the summary follows.\n",
    .options = options,
    .footer = "example: tracekit monitor --cpu-duration 2000 -o /tmp/s -- ./server --port 8080\n",
    .flags = 0,
    .column = 29,
};

typedef struct monitor_args {
	const char *dir, *lib, *upload, *token_file;
	const char *set[sizeof opts / sizeof opts[0]];
	int quiet;
} monitor_args;

static int monitor_option(void *ctx, const tk_cli_option *o, const char *v, const char *spelling)
{
	monitor_args *t = ctx;
	switch (o->id) {
	case OPT_DIR: t->dir = v; return 0;
	case OPT_LIB: t->lib = v; return 0;
	case OPT_UPLOAD: t->upload = v; return 0;
	case OPT_TOKEN_FILE: t->token_file = v; return 0;
	case OPT_QUIET: t->quiet = 1; return 0;
	case OPT_CMD: /* an operand before "--" (options end at "--": parsing never sees CMD) */
		if (v[0] == '-')
			return tk_cli_usage("monitor", "unknown option '%s'", v), -1;
		return tk_cli_usage("monitor", "'%s' is not an option; put the command after --", v), -1;
	}
	size_t k = (size_t)o->id - 1;
	if (!valid_value(v, opts[k].integer))
		return tk_cli_usage("monitor", "%s wants a positive %s, not '%s'", opts[k].name,
		                    opts[k].integer ? "whole number" : "number", v),
		       -1;
	t->set[k] = v;
	return 0;
}

/* The monitor library: $TK_MONITOR_LIB, --lib, or next to this executable (build/), or the
 * install layout (bin/../lib/tracekit/). */
static char *find_lib(const char *given)
{
	if (given)
		return realpath(given, NULL);
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0)
		return NULL;
	self[n] = 0;
	char *slash = strrchr(self, '/');
	if (!slash)
		return NULL;
	*slash = 0;
	static const char *const rel[] = {"/libtracekit-monitor.so", "/../lib/tracekit/libtracekit-monitor.so"};
	for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
		char path[PATH_MAX + 64];
		snprintf(path, sizeof path, "%s%s", self, rel[i]);
		if (access(path, R_OK) == 0)
			return realpath(path, NULL);
	}
	return NULL;
}

/* A monitor library built with -fsanitize=address (the `make check` build) needs the ASan runtime
 * first in the preload list when the program itself is not sanitized. Returns its soname or NULL. */
static char *asan_runtime(const char *lib)
{
	char *found = NULL;
	int fd = open(lib, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	Elf_Scn *scn = NULL;
	while (e && !found && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && sh.sh_entsize && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Dyn dyn;
			if (!gelf_getdyn(d, (int)i, &dyn) || dyn.d_tag != DT_NEEDED)
				continue;
			const char *name = elf_strptr(e, sh.sh_link, dyn.d_un.d_val);
			if (name && strncmp(name, "libasan.so", 10) == 0) {
				found = strdup(name);
				break;
			}
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return found;
}

static int mkdir_p(const char *dir)
{
	char buf[PATH_MAX];
	if (snprintf(buf, sizeof buf, "%s", dir) >= (int)sizeof buf)
		return -1;
	for (char *p = buf + 1; *p; p++)
		if (*p == '/') {
			*p = 0;
			if (mkdir(buf, 0777) && errno != EEXIST)
				return -1;
			*p = '/';
		}
	if (mkdir(buf, 0777) && errno != EEXIST)
		return -1;
	struct stat st;
	return stat(buf, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : -1;
}

/* SIGTERM/SIGHUP sent to us (a service manager, a closed terminal, `kill`) are meant for the run as a
 * whole: pass them to the program, then wait for it and summarise as usual. A signal that arrives
 * before the child exists is remembered and sent once it does. */
static volatile sig_atomic_t child_pid, pending_sig;

static void forward_signal(int sig)
{
	int saved = errno;
	if (child_pid > 0)
		kill((pid_t)child_pid, sig);
	else
		pending_sig = sig;
	errno = saved;
}

static void summarise(const char *dir)
{
	char path[PATH_MAX + 16];
	snprintf(path, sizeof path, "%s/records", dir);
	if (access(path, F_OK) != 0) {
		fprintf(stderr,
		        "tracekit: no records in %s (no high CPU load lasted long enough, or the monitor "
		        "did not start: is the program statically linked or setuid?)\n",
		        dir);
		return;
	}
	tk_error err;
	tk_profile *p = tk_profile_new();
	if (tk_read_path(p, dir, NULL, &err) < 0) {
		tk_cli_warn("%s", err.msg);
		tk_profile_free(p);
		return;
	}
	const char *note = tk_profile_meta(p, "monitor-event");
	if (note)
		fprintf(stderr, "tracekit: note: %s\n", note);
	size_t cpu = 0, hang = 0;
	double worst = 0;
	for (tk_event_id e = 1; e <= tk_event_count(p); e++) {
		if (tk_event_get(p, e)->kind == TK_EVENT_CPU_HIGHLOAD) {
			cpu++;
			double avg = tk_event_num(p, e, "cpu.average");
			if (isfinite(avg) && avg > worst)
				worst = avg;
		} else if (tk_event_get(p, e)->kind == TK_EVENT_HANG) {
			hang++; /* (the run's foreground time is a marker event, not a record) */
		}
	}
	tk_profile_free(p);
	if (cpu + hang == 0) {
		fprintf(stderr,
		        "tracekit: no records in %s (no CPU load stayed above the threshold long enough; see "
		        "--cpu-threshold and --cpu-duration)\n",
		        dir);
		return;
	}
	fprintf(stderr, "tracekit: %zu CPU high-load record%s", cpu, cpu == 1 ? "" : "s");
	if (cpu)
		fprintf(stderr, " (peak average %.0f %% of one core)", worst);
	fprintf(stderr, ", %zu hang%s in %s — `tracekit records %s` lists them\n", hang, hang == 1 ? "" : "s", dir,
	        dir);
}

/* --upload: the monitored program's uploader sent the records as they finished; what its outbox
 * still holds (the last records, or those the server did not acknowledge in time) goes now. */
static int send_outbox(const char *url, const char *token_file, const char *dir)
{
	char token[512] = "";
	FILE *f = fopen(token_file, "r");
	if (!f)
		return tk_cli_fail("monitor: --token-file %s: %s", token_file, strerror(errno));
	if (!fgets(token, sizeof token, f))
		token[0] = 0;
	fclose(f);
	token[strcspn(token, "\r\n")] = 0;
	char path[PATH_MAX + 16];
	snprintf(path, sizeof path, "%s/outbox", dir);
	if (access(path, F_OK) != 0)
		return 0; /* nothing recorded, nothing to send */
	tk_upload_options o = {.token = token};
	tk_error err;
	size_t sent = 0, left = 0;
	int rc = tk_upload_outbox(url, dir, &o, &sent, &left, &err);
	if (rc < 0)
		return tk_cli_fail("monitor: upload: %s (%zu record%s left in %s; the next `tracekit monitor -o %s "
		                   "--upload` sends them)",
		                   err.msg, left, left == 1 ? "" : "s", path, dir);
	if (rc > 0)
		return tk_cli_fail("monitor: upload: %s (set aside in %s/rejected)", err.msg, path);
	fprintf(stderr, "tracekit: records sent to %s as they finished (%zu at exit); session marked uploaded\n", url,
	        sent);
	return 0;
}

int cmd_monitor(int argc, char **argv)
{
	int cmd = 0;
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			cmd = i + 1;
			break;
		}
	monitor_args t = {.lib = getenv("TK_MONITOR_LIB")};
	/* options end at "--": the command's own arguments are never taken as values */
	int end = cmd ? cmd - 1 : argc;
	int r = tk_cli_parse(&tk_cli_command_monitor, end, argv, 1, monitor_option, &t, NULL);
	if (r)
		return r < 0 ? 0 : r;
	const char *dir = t.dir, *lib = t.lib, *upload = t.upload, *token_file = t.token_file;
	const char *const *set = t.set;
	int quiet = t.quiet;
	if (!cmd || cmd >= argc)
		return tk_cli_usage("monitor", "no command to run (tracekit monitor [options] -- CMD [ARGS...])");
	if (upload && !token_file)
		return tk_cli_usage("monitor", "--upload needs --token-file (the bearer token of the server)");
	char *abstoken = token_file ? realpath(token_file, NULL) : NULL;
	if (token_file && !abstoken)
		return tk_cli_fail("monitor: --token-file %s: %s", token_file, strerror(errno));

	char *so = find_lib(lib);
	if (!so)
		return free(abstoken),
		       tk_cli_fail("monitor: %s not found (build it with `make`, or set TK_MONITOR_LIB)",
		                   lib ? lib : "libtracekit-monitor.so next to the tracekit binary"),
		       2;
	char defdir[64];
	if (!dir) {
		time_t now = time(NULL);
		struct tm tm;
		localtime_r(&now, &tm);
		strftime(defdir, sizeof defdir, "tracekit-session-%Y%m%d-%H%M%S", &tm);
		dir = defdir;
	}
	if (mkdir_p(dir)) {
		int e = errno;
		free(so), free(abstoken);
		return tk_cli_fail("monitor: cannot create session directory %s: %s", dir, strerror(e));
	}
	char *absdir = realpath(dir, NULL);

	/* The preload list: the ASan runtime first if the library needs it, ours, then the user's. */
	char *asan = asan_runtime(so);
	const char *old = getenv("LD_PRELOAD");
	size_t len = strlen(so) + (asan ? strlen(asan) : 0) + (old ? strlen(old) : 0) + 4;
	char *preload = malloc(len);
	if (!preload)
		abort();
	snprintf(preload, len, "%s%s%s%s%s", asan ? asan : "", asan ? " " : "", so, old && *old ? " " : "",
	         old ? old : "");
	if (asan && !getenv("ASAN_OPTIONS")) /* leaks of the monitored program are not ours to report */
		setenv("ASAN_OPTIONS", "detect_leaks=0", 1);

	int pipefd[2];
	if (pipe2(pipefd, O_CLOEXEC)) {
		free(so), free(asan), free(preload), free(absdir), free(abstoken);
		return tk_cli_fail("monitor: pipe: %s", strerror(errno));
	}
	fflush(NULL);
	/* Like system(3): while the program runs, ^C and ^\ are its business; we wait and summarise. */
	struct sigaction ign = {.sa_handler = SIG_IGN}, fwd = {.sa_handler = forward_signal}, oldint, oldquit, oldterm,
	                 oldhup;
	sigemptyset(&ign.sa_mask);
	sigemptyset(&fwd.sa_mask);
	fwd.sa_flags = SA_RESTART;
	sigaction(SIGINT, &ign, &oldint);
	sigaction(SIGQUIT, &ign, &oldquit);
	sigset_t fwdset, oldmask;
	sigemptyset(&fwdset);
	sigaddset(&fwdset, SIGTERM);
	sigaddset(&fwdset, SIGHUP);
	child_pid = 0;
	pending_sig = 0;
	/* blocked across fork: the child restores the old dispositions before it can take one */
	sigprocmask(SIG_BLOCK, &fwdset, &oldmask);
	sigaction(SIGTERM, &fwd, &oldterm);
	sigaction(SIGHUP, &fwd, &oldhup);
	pid_t pid = fork();
	if (pid == 0) {
		sigaction(SIGINT, &oldint, NULL);
		sigaction(SIGQUIT, &oldquit, NULL);
		sigaction(SIGTERM, &oldterm, NULL);
		sigaction(SIGHUP, &oldhup, NULL);
		sigprocmask(SIG_SETMASK, &oldmask, NULL);
		close(pipefd[0]);
		setenv("LD_PRELOAD", preload, 1);
		setenv("TK_MONITOR_DIR", absdir ? absdir : dir, 1);
		for (size_t k = 0; k < sizeof opts / sizeof opts[0]; k++)
			if (set[k])
				setenv(opts[k].env, set[k], 1);
		if (upload) { /* the library's own uploader, as an app linking it would set it up */
			setenv("TK_MONITOR_UPLOAD_URL", upload, 1);
			setenv("TK_MONITOR_UPLOAD_TOKEN_FILE", abstoken, 1);
		}
		execvp(argv[cmd], argv + cmd);
		int e = errno;
		if (write(pipefd[1], &e, sizeof e) < 0)
			_exit(127);
		_exit(127);
	}
	close(pipefd[1]);
	if (pid > 0) {
		child_pid = pid;
		if (pending_sig)
			kill(pid, pending_sig);
	}
	sigprocmask(SIG_SETMASK, &oldmask, NULL);
	int rc;
	if (pid < 0) {
		rc = tk_cli_fail("monitor: fork: %s", strerror(errno));
	} else {
		int e = 0, status = 0;
		ssize_t got;
		while ((got = read(pipefd[0], &e, sizeof e)) < 0 && errno == EINTR)
			;
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		if (got == (ssize_t)sizeof e) {
			rc = tk_cli_fail("monitor: cannot run %s: %s", argv[cmd], strerror(e));
			rc = e == ENOENT ? 127 : 126;
		} else {
			if (WIFEXITED(status)) {
				rc = WEXITSTATUS(status);
			} else if (WIFSIGNALED(status)) {
				rc = 128 + WTERMSIG(status);
				if (!quiet)
					fprintf(stderr, "tracekit: %s was killed by signal %d (%s)\n", argv[cmd],
					        WTERMSIG(status), strsignal(WTERMSIG(status)));
			} else {
				rc = 1;
			}
			if (!quiet)
				summarise(absdir ? absdir : dir);
			if (upload && send_outbox(upload, token_file, absdir ? absdir : dir) && rc == 0)
				rc = 1;
		}
	}
	close(pipefd[0]);
	sigaction(SIGINT, &oldint, NULL);
	sigaction(SIGQUIT, &oldquit, NULL);
	sigaction(SIGTERM, &oldterm, NULL);
	sigaction(SIGHUP, &oldhup, NULL);
	if (pid < 0 && pending_sig) /* meant for a program that never started: ours after all */
		raise(pending_sig);
	child_pid = 0;
	free(so);
	free(asan);
	free(preload);
	free(absdir);
	free(abstoken);
	return rc;
}
