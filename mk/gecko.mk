# Firefox Profiler output (lib/write/gecko.c) and `tracekit open` (cli/open.c): libmicrohttpd serves
# the profile and the symbolication API on 127.0.0.1; jansson (mk/records.mk) parses the requests.
# The tests use the profiler's own code (profiler-cli, tests/js) and curl for the HTTP checks.
CLI_LDLIBS += -lmicrohttpd  # `tracekit open` serves from the program, not the library
DEPS_PKGS  += libmicrohttpd-dev curl
