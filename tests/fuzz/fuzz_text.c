/* libFuzzer harness for one text reader (built once per reader with -DTK_FUZZ_READER=tk_reader_X:
 * fuzz_deepcopy, fuzz_sample, fuzz_folded, fuzz_perf). Any bytes must give a profile or a one-line
 * tk_error naming the input, never a crash, hang or sanitizer report. The reader is called
 * directly, not through its sniffer, so the fuzzer reaches the parser with any first line.
 * Whatever parses must survive the folded round trip: folded text A written from the profile,
 * read back by the folded reader and written again, is A byte for byte (when the format can hold
 * the profile: see folded_can_hold). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracekit/read.h"
#include "tracekit/write.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *folded_text(const tk_profile *p, size_t *n)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, n);
	tk_error err;
	if (tk_write_folded(f, p, NULL, &err) < 0)
		abort();
	fclose(f);
	return buf;
}

/* A label the folded format cannot give back as it is: a character the writer replaces
 * (';' '\r' '\n'); blanks at its end (the reader takes them for the separator before the count);
 * a blank then a number at its end ("f 12": the leaf's `f 12 5` reads as a differential line);
 * "# " at its start (a comment line when it is the first frame). */
static int unprintable(const char *s)
{
	if (strpbrk(s, ";\r\n"))
		return 1;
	size_t n = strlen(s);
	if (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		return 1;
	if (s[0] == '#' && (s[1] == ' ' || s[1] == '\t' || !s[1]))
		return 1;
	size_t j = n;
	while (j > 0 && s[j - 1] != ' ' && s[j - 1] != '\t')
		j--;
	if (j > 0 && j < n && s[j] >= '0' && s[j] <= '9') {
		size_t k = j, dots = 0;
		while (k < n && ((s[k] >= '0' && s[k] <= '9') || (s[k] == '.' && !dots++)))
			k++;
		if (k == n)
			return 1;
	}
	return 0;
}

/* Profiles the folded format cannot hold exactly: a name with a character the writer replaces
 * (';' '\r' '\n'), two threads that print the same `NAME tid=TID`, or threads of equal weight in
 * a profile with several pids (their order comes from the pid, which folded lines do not carry). */
static int folded_can_hold(const tk_profile *p)
{
	char buf[32];
	for (tk_frame_id f = 1; f <= tk_frame_count(p); f++)
		if (unprintable(tk_frame_label(p, f, buf)))
			return 0;
	size_t n = tk_thread_count(p), pids = 0;
	for (size_t i = 0; i < n && pids < 2; i++)
		pids = tk_thread_get(p, (tk_thread_id)i)->pid != tk_thread_get(p, 0)->pid ? 2 : 1;
	for (size_t i = 0; i < n; i++) {
		const tk_thread *a = tk_thread_get(p, (tk_thread_id)i);
		const char *na = a->name ? tk_string(p, a->name) : "(unnamed)";
		if (unprintable(na))
			return 0;
		for (size_t j = i + 1; j < n; j++) {
			const tk_thread *b = tk_thread_get(p, (tk_thread_id)j);
			const char *nb = b->name ? tk_string(p, b->name) : "(unnamed)";
			if (a->tid == b->tid && strcmp(na, nb) == 0)
				return 0;
			/* writers order threads of equal weight by (pid, tid); read back, the pids are made up
			 * (-1, or -2, -3 … for a second name with the same tid), so that order can change once
			 * more than one pid is involved */
			if (a->weight == b->weight && pids > 1)
				return 0;
		}
	}
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	tk_error err = {{0}};
	tk_input *in = tk_input_open_mem(data, size, "fuzz", &err);
	if (!in)
		return 0;
	tk_profile *p = tk_profile_new();
	tk_read_options o = {0}; /* what tk_read_options_init gives, without linking every reader */
	o.time_to = UINT64_MAX;
	int rc = TK_FUZZ_READER.read(p, in, &o, &err);
	tk_input_close(in);
	if (rc < 0) {
		if (strncmp(err.msg, "fuzz", 4) != 0 || strchr(err.msg, '\n'))
			abort(); /* errors name the input and are one line */
	} else {
		uint64_t sum = 0;
		for (size_t t = 0; t < tk_thread_count(p); t++)
			sum += tk_thread_get(p, (tk_thread_id)t)->weight;
		if (sum != tk_profile_weight(p))
			abort();
		size_t na;
		char *a = folded_text(p, &na);
		if (na && folded_can_hold(p)) {
			tk_input *in2 = tk_input_open_mem(a, na, "fuzz-folded", &err);
			tk_profile *q = tk_profile_new();
			if (!in2 || tk_reader_folded.read(q, in2, &o, &err) < 0) {
				fprintf(stderr, "folded output not readable: %s\n", err.msg);
				abort();
			}
			tk_input_close(in2);
			size_t nb;
			char *b = folded_text(q, &nb);
			if (na != nb || memcmp(a, b, na) != 0) {
				fprintf(stderr, "folded round trip differs:\n%.*s\n---\n%.*s\n", (int)na, a, (int)nb,
				        b);
				abort();
			}
			free(b);
			tk_profile_free(q);
		}
		free(a);
	}
	tk_profile_free(p);
	return 0;
}
