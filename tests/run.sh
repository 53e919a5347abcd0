#!/usr/bin/env bash
# Runs every test: installs what is missing and builds the binary
# (conf/setup.sh), builds the tests and benchmarks, then ctest. Tests start
# their own services (redis-server, the scripted upstream, reprox itself) on
# free loopback ports and stop them.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
bash conf/setup.sh
# The tests and benchmarks (setup.sh built only the binary).
cmake --build build -j2
cd build
ctest --output-on-failure -j2 --timeout 900
