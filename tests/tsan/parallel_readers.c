/*
 * Four threads read exports at once, each into its own profile, with both tokenizers: readers
 * share no mutable state, so ThreadSanitizer (this file is built with -fsanitize=thread by
 * mk/harden.mk and run by tests/cli/harden_tsan.sh) must report nothing, and every thread must
 * get the same result as a read alone. The documents include tags with more than 16 attributes
 * (the fast tokenizer's sorted duplicate check) and long text runs (read in pieces).
 *
 * usage: parallel_readers FILE…   prints "ok - …" / "not ok - …" lines
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracekit/read.h"

#define THREADS 4
#define ROUNDS 3

typedef struct job {
	const char *path;
	int tokenizer;
	uint64_t weight, samples;
	size_t threads, frames, stacks;
	int rc;
	char err[512];
} job;

static void read_one(job *j)
{
	tk_error err = {{0}};
	tk_profile *p = tk_profile_new();
	tk_read_options o;
	memset(&o, 0, sizeof o);
	o.time_to = UINT64_MAX;
	o.tokenizer = j->tokenizer;
	tk_input *in = tk_input_open(j->path, &err);
	j->rc = in ? tk_reader_xctrace.read(p, in, &o, &err) : -1;
	tk_input_close(in);
	snprintf(j->err, sizeof j->err, "%s", j->rc < 0 ? err.msg : "");
	j->weight = tk_profile_weight(p);
	j->samples = tk_profile_samples(p);
	j->threads = tk_thread_count(p);
	j->frames = tk_frame_count(p);
	j->stacks = tk_stack_count(p);
	tk_profile_free(p);
}

static void *run(void *arg)
{
	job *j = arg;
	for (int r = 0; r < ROUNDS; r++)
		read_one(j);
	return NULL;
}

static int same(const job *a, const job *b)
{
	return a->rc == b->rc && a->weight == b->weight && a->samples == b->samples && a->threads == b->threads &&
	       a->frames == b->frames && a->stacks == b->stacks && strcmp(a->err, b->err) == 0;
}

int main(int argc, char **argv)
{
	int bad = 0;
	for (int f = 1; f < argc; f++) {
		job alone[2], par[THREADS];
		for (int t = 0; t < 2; t++) {
			alone[t] =
			    (job){.path = argv[f], .tokenizer = t ? TK_READ_TOKENIZER_LIBXML2 : TK_READ_TOKENIZER_FAST};
			read_one(&alone[t]);
		}
		pthread_t th[THREADS];
		for (int t = 0; t < THREADS; t++) {
			par[t] = (job){.path = argv[f],
			               .tokenizer = t & 1 ? TK_READ_TOKENIZER_LIBXML2 : TK_READ_TOKENIZER_FAST};
			pthread_create(&th[t], NULL, run, &par[t]);
		}
		for (int t = 0; t < THREADS; t++)
			pthread_join(th[t], NULL);
		int ok = 1;
		for (int t = 0; t < THREADS; t++)
			ok &= same(&par[t], &alone[t & 1]);
		const char *b = strrchr(argv[f], '/');
		printf("%s - %d threads reading %s: results equal a read alone (%llu samples)\n", ok ? "ok" : "not ok",
		       THREADS, b ? b + 1 : argv[f], (unsigned long long)alone[0].samples);
		bad |= !ok;
	}
	return bad;
}
