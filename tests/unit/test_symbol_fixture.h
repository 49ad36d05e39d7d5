/*
 * The symbol tests' fixture: a fresh temporary directory per test or group (setup/teardown for cmocka,
 * cache_dir) and a symbolicator caching there that searches the committed generated dSYM
 * (tests/fixtures/symbol). Include after <cmocka.h>.
 */
#ifndef TEST_SYMBOL_FIXTURE_H
#define TEST_SYMBOL_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracekit/symbol.h"

static char cache_dir[64];

static inline int setup(void **state)
{
	strcpy(cache_dir, "/tmp/tk-symfix-XXXXXX");
	return mkdtemp(cache_dir) ? 0 : -1;
}

static inline int teardown(void **state)
{
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", cache_dir);
	return system(cmd) == 0 ? 0 : -1;
}

static inline tk_symbolicator *sym(void)
{
	tk_symbol_options o;
	tk_symbol_options_init(&o);
	o.cache_dir = cache_dir;
	tk_symbolicator *s = tk_symbolicator_new(&o);
	tk_error err;
	assert_int_equal(tk_symbolicator_add_path(s, "tests/fixtures/symbol", &err), 0);
	return s;
}

#endif
