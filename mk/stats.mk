# Statistics across reports and runs (lib/stats/), `tracekit stats` and `tracekit diff`.
# The tests compare with python3's statistics module (type 7 = method='inclusive') and numpy;
# the benchmark runs numpy side by side.
DEPS_PKGS += python3 python3-numpy
