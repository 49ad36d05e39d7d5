# Hardening tests (tests/cli/harden_*.sh): /usr/bin/time measures peak RSS of bounded-memory runs.
DEPS_PKGS += time

# ThreadSanitizer build of tests/tsan/parallel_readers.c over the reader, model and util sources
# (the same list the read fuzzers use); tests/cli/harden_tsan.sh runs it in make check.
TSAN_SRC = lib/read/input.c lib/read/xctrace.c lib/read/kdebug.c lib/read/toc.c lib/read/xml.c \
           lib/read/xml_fast.c lib/read/xml_libxml2.c lib/model/profile.c $(wildcard lib/util/*.c)
$(BUILD)/tsan/parallel_readers: tests/tsan/parallel_readers.c $(TSAN_SRC) $(wildcard lib/read/*.h lib/util/*.h include/tracekit/*.h)
	@mkdir -p $(dir $@)
	clang -std=c17 -D_GNU_SOURCE -g -O1 -fsanitize=thread -Iinclude -Ilib -I/usr/include/libxml2 \
	  -o $@ $< $(TSAN_SRC) -lxml2 -lz -lm -lpthread
EXTRA_TEST_DEPS += $(BUILD)/tsan/parallel_readers
