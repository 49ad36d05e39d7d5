/*
 * Runs the Swift project's demangling test vectors (tests/fixtures/swift-demangle) through
 * tk_swift_demangle: `swift_vectors [-s] [-v] [-l] FILE` prints "pass N of M"; -l lists the
 * passing inputs (one per line), -v prints every failure with what we produced. The {T:…}/{C}
 * classification prefixes of the expected outputs are stripped (SOURCES.md). An expected output
 * equal to the input means "not demangled": we must return 0 (the caller shows the input).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracekit/symbol.h"

static char *strip_class(char *s)
{
	if (s[0] == '{' && (s[1] == 'T' || s[1] == 'C')) {
		char *e = strstr(s, "} ");
		if (e)
			return e + 2;
	}
	return s;
}

int main(int argc, char **argv)
{
	int simp = 0, verbose = 0, list = 0;
	const char *path = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-s"))
			simp = 1;
		else if (!strcmp(argv[i], "-v"))
			verbose = 1;
		else if (!strcmp(argv[i], "-l"))
			list = 1;
		else
			path = argv[i];
	}
	FILE *f = path ? fopen(path, "r") : NULL;
	if (!f) {
		fprintf(stderr, "usage: swift_vectors [-s] [-v] [-l] FILE\n");
		return 2;
	}
	char line[8192], out[8192];
	int pass = 0, total = 0;
	while (fgets(line, sizeof line, f)) {
		char *sep = strstr(line, " ---> ");
		if (!sep || line[0] == '/')
			continue;
		*sep = 0;
		char *in = line, *want = sep + 6;
		want[strcspn(want, "\n")] = 0;
		size_t il = strlen(in);
		while (il && in[il - 1] == ' ')
			in[--il] = 0;
		want = strip_class(want);
		total++;
		size_t n = tk_swift_demangle(in, il, out, sizeof out, simp ? TK_DEMANGLE_SIMPLIFIED : TK_DEMANGLE_FULL);
		const char *got = n ? out : in;
		if (!strcmp(got, want)) {
			pass++;
			if (list)
				printf("%s\n", in);
		} else if (verbose)
			printf("FAIL %s\n  want %s\n  got  %s\n", in, want, n ? out : "(unchanged)");
	}
	fclose(f);
	if (!list)
		printf("pass %d of %d\n", pass, total);
	return 0;
}
