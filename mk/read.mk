# Readers (lib/read): xctrace XML via libxml2 (reference tokenizer) and zlib for gzip'd input.
DEPS_PKGS += libxml2-dev zlib1g-dev

# `make read-speed FILE=big.xml`: tokenizer and reader throughput (a measuring tool, not a test).
$(BUILD)/read-speed: tests/fuzz/xml_speed.c $(BUILD)/libtracekit.a
	$(CC) $(CPPFLAGS_TK) $(CFLAGS_TK) -o $@ $< $(BUILD)/libtracekit.a $(LIB_LDLIBS)
.PHONY: read-speed
read-speed: $(BUILD)/read-speed
	@for m in fast libxml2 model model-libxml2; do $(BUILD)/read-speed $(FILE) $$m; done
