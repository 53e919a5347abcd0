#!/usr/bin/env bash
# Runs every test: installs what is missing and builds the binary
# (conf/setup.sh), builds the tests and benchmarks, then ctest. Tests start
# their own services (redis-server, the scripted upstream, reprox itself) on
# free loopback ports and stop them. Then the same tests again under
# sanitizers (tests/sanitize/run.sh: every engine-free test under
# ASan+UBSan, the concurrency tests under TSan) and each fuzz target for
# 30 s (tests/fuzz/run_smoke.sh). REPROX_QUICK_TESTS=1 stops after ctest.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
bash conf/setup.sh
# The tests and benchmarks (setup.sh built only the binary).
cmake --build build -j2
(cd build && ctest --output-on-failure -j2 --timeout 900)
[ "${REPROX_QUICK_TESTS:-0}" = 1 ] && exit 0
bash tests/sanitize/run.sh asan
bash tests/sanitize/run.sh tsan
bash tests/fuzz/run_smoke.sh 30
