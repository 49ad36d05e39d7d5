# Viewer outputs (convert, flame): speedscope, pprof (protobuf-c), SVG flame graphs, and the tests
# that load them in the viewers' own code: go tool pprof, headless Chromium (playwright-core).
DEPS_PKGS += golang-go libprotobuf-c-dev protobuf-c-compiler chromium

# The flame graph's inline script lives in lib/write/svg_script.js and becomes a C string here.
$(BUILD)/gen/write/svg_script.inc: lib/write/svg_script.js
	@mkdir -p $(dir $@)
	sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $< >$@.tmp && mv $@.tmp $@
$(BUILD)/obj/lib/write/svg.o: $(BUILD)/gen/write/svg_script.inc
$(BUILD)/obj/lib/write/svg.o: CPPFLAGS_TK += -I$(BUILD)/gen
