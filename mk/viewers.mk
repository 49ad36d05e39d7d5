# Viewer outputs (convert, flame): speedscope, pprof (protobuf-c), SVG flame graphs, and the tests
# that load them in the viewers' own code: go tool pprof, headless Chromium (playwright-core).
DEPS_PKGS += golang-go libprotobuf-c-dev protobuf-c-compiler chromium
