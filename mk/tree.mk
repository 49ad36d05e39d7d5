# Call trees, transforms and the tree/top/collapse subcommands.
# No extra libraries: the CLI tests only need python3 (json module), already in DEPS_PKGS.
DEPS_PKGS += python3
