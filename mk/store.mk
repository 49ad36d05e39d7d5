# Fleet store (lib/store): SQLite (embedded, the default), ClickHouse over HTTP (libcurl), the ingest
# endpoint of `tracekit serve` (libmicrohttpd), SHA-256 content hashes (OpenSSL's libcrypto).
# clickhouse-server is what tests/cli/store_*.sh start on 127.0.0.1 (tests/store_lib.sh); sqlite3 and
# curl are used by the tests as independent readers/clients.
STORE_LDLIBS += -lsqlite3 -lcurl -lmicrohttpd -lcrypto -lpthread -ldeflate
DEPS_PKGS  += libsqlite3-dev libcurl4-openssl-dev libmicrohttpd-dev libssl-dev libdeflate-dev clickhouse-server sqlite3 curl
# strace: tests/cli/store_serve_sync.sh sees serve's fdatasync come before each acknowledgement
DEPS_PKGS  += strace

# bench/storegen: generated field reports (session directories or one stream of Records files)
EXTRA_ALL += $(BUILD)/storegen
$(BUILD)/storegen: bench/storegen.c
	@mkdir -p $(dir $@)
	$(CC) $(STD) $(WARN) $(OPT) $(SAN) -o $@ $< -lm

# bench/store_put: the store's own put rate (reports already parsed), used by bench/bench_store.sh
$(BUILD)/bench/store_put: bench/store_put.c $(BUILD)/libtracekit-store.a $(BUILD)/libtracekit.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_TK) $(CFLAGS_TK) -o $@ $< $(BUILD)/libtracekit-store.a $(BUILD)/libtracekit.a $(STORE_LDLIBS) $(LIB_LDLIBS)

# bench/dash_get: dashboard requests answered in-process (first answer's CPU, bodies kept to compare builds)
$(BUILD)/bench/dash_get: bench/dash_get.c $(BUILD)/libtracekit-store.a $(BUILD)/libtracekit.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_TK) $(CFLAGS_TK) -o $@ $< $(BUILD)/libtracekit-store.a $(BUILD)/libtracekit.a $(STORE_LDLIBS) $(LIB_LDLIBS)

# libFuzzer harness over the upload bundle decoder (lib/store/bundle.c + reports.c + the Records
# reader): make check runs a short seeded pass (tests/cli/store_fuzz.sh); `make fuzz-bundle` longer.
# Uploaded profiles (lib/store/inputs.c) go through every reader and the stats function table, so
# those are in too: the fuzzer reaches them through a bundle's "profile" part.
FUZZ_BUNDLE_SRC := tests/fuzz/fuzz_bundle.c lib/store/bundle.c lib/store/reports.c lib/store/inputs.c lib/store/stacks.c \
                   $(wildcard lib/read/*.c lib/model/*.c lib/stats/*.c) \
                   lib/symbol/elf.c lib/symbol/elf_name.c $(wildcard lib/symbol/demangle*.c lib/symbol/swift_*.c lib/util/*.c)
$(BUILD)/fuzz_bundle: $(filter-out lib/%,$(FUZZ_BUNDLE_SRC)) $(call fuzzobj,$(FUZZ_BUNDLE_SRC)) $(wildcard include/tracekit/*.h lib/util/*.h lib/symbol/*.h lib/store/*.h)
	@mkdir -p $(dir $@)
	clang $(STD) -Iinclude -Ilib -I/usr/include/libxml2 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	  -o $@ $(filter-out lib/%,$(FUZZ_BUNDLE_SRC)) $(call fuzzobj,$(FUZZ_BUNDLE_SRC)) -lxml2 -ljansson -ldw -lelf -liberty -lz -ldeflate -lcrypto -lpthread -lm
EXTRA_TEST_DEPS += $(BUILD)/fuzz_bundle
.PHONY: fuzz-bundle
fuzz-bundle: $(BUILD)/fuzz_bundle
	mkdir -p $(BUILD)/fuzz-bundle-corpus && cp -n tests/fuzz/corpus/bundle/* $(BUILD)/fuzz-bundle-corpus/
	$(BUILD)/fuzz_bundle -max_total_time=$(FUZZ_TIME) -max_len=8192 $(BUILD)/fuzz-bundle-corpus

# examples/api: programs on the public API, linked against the analysis library alone (no store
# libraries), which proves the split; tests/cli/lib_split.sh runs them.
API_EXAMPLES := $(patsubst examples/api/%.c,$(BUILD)/examples/api/%,$(wildcard examples/api/*.c))
EXTRA_ALL += $(API_EXAMPLES)
$(BUILD)/examples/api/%: examples/api/%.c $(BUILD)/libtracekit.a
	@mkdir -p $(dir $@)
	$(CC) -Iinclude $(CFLAGS_TK) -o $@ $< $(BUILD)/libtracekit.a $(LIB_LDLIBS)
