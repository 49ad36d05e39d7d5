# libtracekit-monitor: frame pointers in the library and its demos (the stack walker follows them),
# the demo programs, and the Darwin compile check.
MON_FP_FLAGS := -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -fno-optimize-sibling-calls
$(BUILD)/obj/monitor/%.o: CFLAGS_TK += $(MON_FP_FLAGS) -fvisibility=hidden
MON_LDLIBS += -lm -Wl,-z,nodelete  # the signal handler must never be unmapped by a dlclose
DEPS_PKGS += binutils libc6-dev-arm64-cross

MON_EXAMPLES := $(patsubst examples/monitor/%.c,$(BUILD)/examples/monitor/%,$(wildcard examples/monitor/*.c))
EXTRA_ALL += $(MON_EXAMPLES)
EXTRA_TEST_DEPS += $(MON_EXAMPLES) monitor-darwin-check monitor-aarch64-check

# Demos link the static library (so they run under the sanitizers of `make check` too); busy.c uses
# no monitor API and is monitored through LD_PRELOAD in the tests.
$(BUILD)/examples/monitor/%: examples/monitor/%.c $(BUILD)/libtracekit-monitor.a
	@mkdir -p $(dir $@)
	$(CC) -Iinclude $(CFLAGS_TK) $(MON_FP_FLAGS) -o $@ $< $(BUILD)/libtracekit-monitor.a $(MON_LDLIBS)

# The whole library for Darwin (core, preload, Darwin backend): compile-checked, not run, with clang for
# iOS and macOS against the declarations shim in monitor/darwin/shim/ (there is no Apple SDK here).
DARWIN_CHECK_SRC := $(wildcard monitor/*.c) monitor/darwin/backend_darwin.c
DARWIN_CHECK_FLAGS := -std=c17 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wno-unused-parameter \
	-ffreestanding -nostdlibinc -isystem monitor/darwin/shim -Iinclude -fsyntax-only
DARWIN_TARGETS := arm64-apple-ios14.0 arm64e-apple-ios14.0 arm64-apple-macos11 x86_64-apple-macos11
.PHONY: monitor-darwin-check
monitor-darwin-check:
	@set -e; for t in $(DARWIN_TARGETS); do for f in $(DARWIN_CHECK_SRC); do \
		echo "clang -target $$t (darwin compile check) $$f"; \
		clang -target $$t $(DARWIN_CHECK_FLAGS) $$f; done; done

# The Linux backend's aarch64 code (ucontext registers, XPACLRI, LR recovery) is compiled, not run, for
# aarch64 against Debian's cross libc headers.
.PHONY: monitor-aarch64-check
monitor-aarch64-check:
	@set -e; for f in $(wildcard monitor/*.c monitor/linux/*.c); do \
		echo "clang -target aarch64-linux-gnu (compile check) $$f"; \
		clang -target aarch64-linux-gnu -nostdlibinc -isystem /usr/aarch64-linux-gnu/include -std=c17 \
		-D_GNU_SOURCE -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wno-unused-parameter -Iinclude \
		$(MON_FP_FLAGS) -O2 -c $$f -o /dev/null; done

# monitor unit tests capture stacks of their own functions: keep their frame pointers too
$(BUILD)/tests/test_monitor_%: CFLAGS_TK += $(MON_FP_FLAGS)

# bench/bench_monitor.sh builds this (internal backend API, so -Imonitor)
$(BUILD)/bench/monitor/bench_monitor: bench/monitor/bench_monitor.c $(BUILD)/libtracekit-monitor.a
	@mkdir -p $(dir $@)
	$(CC) -Iinclude -Imonitor $(CFLAGS_TK) $(MON_FP_FLAGS) -o $@ $< $(BUILD)/libtracekit-monitor.a $(MON_LDLIBS)

# host programs that tests/cli/monitor_{fds,host}.sh run under the preloaded monitor (no monitor API)
MON_HOSTS := $(patsubst tests/monitor/%.c,$(BUILD)/tests/monitor/%,$(wildcard tests/monitor/*.c))
$(BUILD)/tests/monitor/%: tests/monitor/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_TK) $(MON_FP_FLAGS) -o $@ $< -lpthread
EXTRA_TEST_DEPS += $(MON_HOSTS)

# ThreadSanitizer build of examples/monitor/upload.c over the monitor's sources (uploader thread,
# outbox lock, monitor threads); tests/cli/monitor_upload.sh runs it against a real serve.
$(BUILD)/tsan/monitor_upload: examples/monitor/upload.c $(wildcard monitor/*.c monitor/*.h monitor/linux/*.c) include/tracekit/monitor.h
	@mkdir -p $(dir $@)
	clang -std=c17 -D_GNU_SOURCE -g -O1 -fsanitize=thread $(MON_FP_FLAGS) -Iinclude -o $@ $< \
	  $(wildcard monitor/*.c monitor/linux/*.c) -lpthread -ldl -lm
EXTRA_TEST_DEPS += $(BUILD)/tsan/monitor_upload
