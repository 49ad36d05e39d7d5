# Benchmarks and generators (bench/). `make bench` runs bench/run.sh.
EXTRA_ALL += $(BUILD)/xcgen
# GNU time for peak RSS (/usr/bin/time -f %M) in bench/bench_*.sh.
DEPS_PKGS += time

# xcgen is standalone on purpose: its ground truth must not depend on the library it checks.
$(BUILD)/xcgen: bench/xcgen.c
	@mkdir -p $(dir $@)
	$(CC) $(STD) $(WARN) $(OPT) $(SAN) -o $@ $< -lz
