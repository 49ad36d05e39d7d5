# libtracekit-monitor: frame pointers in the library and its demos (the stack walker follows them),
.DEFAULT_GOAL := all
# the demo programs, and the Darwin compile check.
MON_FP_FLAGS := -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -fno-optimize-sibling-calls
$(BUILD)/obj/monitor/%.o: CFLAGS_TK += $(MON_FP_FLAGS)
MON_LDLIBS += -lm
DEPS_PKGS += binutils

MON_EXAMPLES := $(patsubst examples/monitor/%.c,$(BUILD)/examples/monitor/%,$(wildcard examples/monitor/*.c))
EXTRA_ALL += $(MON_EXAMPLES)
EXTRA_TEST_DEPS += $(MON_EXAMPLES) monitor-darwin-check

# Demos link the static library (so they run under the sanitizers of `make check` too); busy.c uses
# no monitor API and is monitored through LD_PRELOAD in the tests.
$(BUILD)/examples/monitor/%: examples/monitor/%.c $(BUILD)/libtracekit-monitor.a
	@mkdir -p $(dir $@)
	$(CC) -Iinclude $(CFLAGS_TK) $(MON_FP_FLAGS) -o $@ $< $(BUILD)/libtracekit-monitor.a $(MON_LDLIBS)

# Darwin backend: compile-checked (not run) with clang for arm64 iOS and x86-64 macOS against the
# declarations shim in monitor/darwin/shim/ (there is no Apple SDK here).
DARWIN_CHECK_FLAGS := -std=c17 -Wall -Wextra -Werror -Wno-unused-parameter -ffreestanding -nostdlibinc \
	-isystem monitor/darwin/shim -fsyntax-only
.PHONY: monitor-darwin-check
monitor-darwin-check:
	clang -target arm64-apple-ios14.0 $(DARWIN_CHECK_FLAGS) monitor/darwin/backend_darwin.c
	clang -target arm64e-apple-ios14.0 $(DARWIN_CHECK_FLAGS) monitor/darwin/backend_darwin.c
	clang -target arm64-apple-macos11 $(DARWIN_CHECK_FLAGS) monitor/darwin/backend_darwin.c
	clang -target x86_64-apple-macos11 $(DARWIN_CHECK_FLAGS) monitor/darwin/backend_darwin.c

# monitor unit tests capture stacks of their own functions: keep their frame pointers too
$(BUILD)/tests/test_monitor_%: CFLAGS_TK += $(MON_FP_FLAGS)

# bench/bench_monitor.sh builds this (internal backend API, so -Imonitor)
$(BUILD)/bench/monitor/bench_monitor: bench/monitor/bench_monitor.c $(BUILD)/libtracekit-monitor.a
	@mkdir -p $(dir $@)
	$(CC) -Iinclude -Imonitor $(CFLAGS_TK) $(MON_FP_FLAGS) -o $@ $< $(BUILD)/libtracekit-monitor.a $(MON_LDLIBS)
