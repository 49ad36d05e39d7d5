# Hardening tests (tests/cli/harden_*.sh): /usr/bin/time measures peak RSS of bounded-memory runs.
DEPS_PKGS += time
