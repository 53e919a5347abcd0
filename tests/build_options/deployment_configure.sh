#!/usr/bin/env bash
# Configures reprox as a deployment build would (REPROX_BUILD_TESTS=OFF,
# REPROX_BUILD_BENCHMARKS=OFF) with GoogleTest, Google Benchmark and
# prometheus-cpp's package config (with the civetweb, zlib and curl it pulls
# in) disabled for find_package, so any find of them that is not guarded
# fails the configure. Then checks the generated targets.
#   deployment_configure.sh SOURCE_DIR SCRATCH_BUILD_DIR
set -euo pipefail
src="$1" dir="$2"
rm -rf "$dir"
cmake -S "$src" -B "$dir" -DCMAKE_BUILD_TYPE=Release \
  -DREPROX_BUILD_TESTS=OFF -DREPROX_BUILD_BENCHMARKS=OFF \
  -DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON -DCMAKE_DISABLE_FIND_PACKAGE_benchmark=ON \
  -DCMAKE_DISABLE_FIND_PACKAGE_civetweb=ON -DCMAKE_DISABLE_FIND_PACKAGE_CURL=ON -DCMAKE_DISABLE_FIND_PACKAGE_ZLIB=ON \
  -DCMAKE_DISABLE_FIND_PACKAGE_prometheus-cpp=ON >"$dir.log" 2>&1 || {
  cat "$dir.log"; echo "FAIL: the deployment configure failed"; exit 1; }
targets="$(cmake --build "$dir" --target help)"
fail=0
grep -qE '^\.\.\. reprox$' <<<"$targets" || { echo "FAIL: no reprox target"; fail=1; }
if grep -E '^\.\.\. .*(_tests?|_bench_.*|reprox_bench.*)$' <<<"$targets"; then
  echo "FAIL: test or benchmark targets were generated (above)"; fail=1
fi
rm -rf "$dir"
[ "$fail" -eq 0 ] && echo "deployment configure: ok (reprox only; no GoogleTest, Google Benchmark, civetweb, zlib or curl)"
exit "$fail"
