# Fleet store (lib/store): SQLite (embedded, the default), ClickHouse over HTTP (libcurl), the ingest
# endpoint of `tracekit serve` (libmicrohttpd), SHA-256 content hashes (OpenSSL's libcrypto).
# clickhouse-server is what tests/cli/store_*.sh start on 127.0.0.1 (tests/store_lib.sh); sqlite3 and
# curl are used by the tests as independent readers/clients.
LIB_LDLIBS += -lsqlite3 -lcurl -lmicrohttpd -lcrypto -lpthread
DEPS_PKGS  += libsqlite3-dev libcurl4-openssl-dev libmicrohttpd-dev libssl-dev clickhouse-server sqlite3 curl

# bench/storegen: generated field reports (session directories or one stream of Records files)
EXTRA_ALL += $(BUILD)/storegen
$(BUILD)/storegen: bench/storegen.c
	@mkdir -p $(dir $@)
	$(CC) $(STD) $(WARN) $(OPT) $(SAN) -o $@ $< -lm

# bench/store_put: the store's own put rate (reports already parsed), used by bench/bench_store.sh
$(BUILD)/bench/store_put: bench/store_put.c $(BUILD)/libtracekit.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS_TK) $(CFLAGS_TK) -o $@ $< $(BUILD)/libtracekit.a $(LIB_LDLIBS)
