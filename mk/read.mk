# Readers (lib/read): xctrace XML via libxml2 (reference tokenizer) and zlib for gzip'd input.
DEPS_PKGS += libxml2-dev zlib1g-dev
