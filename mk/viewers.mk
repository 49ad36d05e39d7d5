# Viewer outputs (convert, flame): speedscope, pprof (protobuf-c), SVG flame graphs, and the tests
# that load them in the viewers' own code: go tool pprof, headless Chromium (playwright-core).
DEPS_PKGS += golang-go libprotobuf-c-dev protobuf-c-compiler chromium

# The flame graph's inline script lives in lib/write/svg_script.js and becomes a C string here.
$(BUILD)/gen/write/svg_script.inc: lib/write/svg_script.js
	@mkdir -p $(dir $@)
	sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $< >$@.tmp && mv $@.tmp $@
$(BUILD)/obj/lib/write/svg.o: $(BUILD)/gen/write/svg_script.inc
$(BUILD)/obj/lib/write/svg.o: CPPFLAGS_TK += -I$(BUILD)/gen

# pprof: proto/profile.proto compiled by protoc-c into build/gen/proto (not committed), linked into
# libtracekit.a. The generated code is compiled without -Werror (it is not ours to fix).
LIB_LDLIBS += -lprotobuf-c
PB_GEN := $(BUILD)/gen/proto/profile.pb-c.c $(BUILD)/gen/proto/profile.pb-c.h
$(BUILD)/gen/proto/profile.pb-c.h: proto/profile.proto
	@mkdir -p $(dir $@)
	protoc-c --c_out=$(dir $@) -Iproto proto/profile.proto
$(BUILD)/gen/proto/profile.pb-c.c: $(BUILD)/gen/proto/profile.pb-c.h
$(BUILD)/obj/gen/profile.pb-c.o: $(BUILD)/gen/proto/profile.pb-c.c
	@mkdir -p $(dir $@)
	$(CC) $(STD) $(OPT) $(SAN) -fPIC -I$(BUILD)/gen/proto -c $< -o $@
$(BUILD)/obj/lib/write/pprof.o: $(BUILD)/gen/proto/profile.pb-c.h
$(BUILD)/obj/lib/write/pprof.o: CPPFLAGS_TK += -I$(BUILD)/gen/proto
$(BUILD)/libtracekit.a: $(BUILD)/obj/gen/profile.pb-c.o
