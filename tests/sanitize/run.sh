#!/usr/bin/env bash
# Builds reprox with a sanitizer in its own build directory and runs tests
# there. Any sanitizer report, from a test binary or from a reprox server
# that an end-to-end test started, fails the run: reports go to files
# (log_path) and the run fails when one exists, so a report from a process
# that was killed rather than exited is not lost.
#
#   bash tests/sanitize/run.sh asan   # ASan+UBSan, engine-free build: every
#                                     # unit test and every e2e test of it
#   bash tests/sanitize/run.sh tsan   # TSan, with the engine: the
#                                     # concurrency tests (TSAN_TESTS)
# Further arguments go to ctest (e.g. --rerun-failed, -R regex).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
kind="${1:?usage: run.sh asan|tsan [ctest args]}"
shift
jobs="${JOBS:-2}"
# Unity builds (CMake batches a target's sources into a few translation
# units): instrumented code compiles about twice as fast that way.
configure_options=(-DCMAKE_UNITY_BUILD=ON)
command -v ccache >/dev/null 2>&1 && configure_options+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)

# The concurrency tests: server and I/O pool, single-flight (coalescing),
# the store conformance suite over memory, Redis and tiered stores, the
# near-duplicate index suite over memory and Redis, the Redis channel, the
# batching needle, streams and disconnects end to end.
TSAN_TESTS='^(IoPool|cache\.|redis\.|batching\.|e2e_(coalescing|streaming|disconnect|slow_reader|shutdown|http_robustness|tenant_limits|redis_shared_tier|redis_keepalive_mixed_load|redis_chaos))'

case "$kind" in
  asan)
    dir="$root/build-asan"
    cmake -S "$root" -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DREPROX_SANITIZE=address,undefined \
      -DREPROX_WITH_TORCH=OFF "${configure_options[@]}" >/dev/null
    cmake --build "$dir" -j"$jobs"
    select=()
    ;;
  tsan)
    dir="$root/build-tsan"
    cmake -S "$root" -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DREPROX_SANITIZE=thread "${configure_options[@]}" >/dev/null
    cmake --build "$dir" -j"$jobs" --target reprox reprox_server_tests reprox_cache_conformance_tests reprox_cache_unit_tests \
      reprox_redis_unit_tests reprox_redis_store_tests reprox_near_index_tests reprox_batching_tests
    select=(-R "$TSAN_TESTS")
    ;;
  *) echo "run.sh: unknown sanitizer '$kind' (asan or tsan)" >&2; exit 2 ;;
esac

reports="$dir/sanitizer-reports"
rm -rf "$reports" && mkdir -p "$reports"
export ASAN_OPTIONS="log_path=$reports/asan:detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="log_path=$reports/ubsan:print_stacktrace=1:halt_on_error=1"
export TSAN_OPTIONS="log_path=$reports/tsan:halt_on_error=1:second_deadlock_stack=1"
# libtorch and OpenBLAS are not instrumented: one intra-op thread each, so
# TSan sees every thread that touches our memory (see cmake/sanitize.cmake).
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1

status=0
(cd "$dir" && ctest --output-on-failure -j"$jobs" --timeout 900 "${select[@]}" "$@") || status=$?
if compgen -G "$reports/*" >/dev/null; then
  echo "run.sh: sanitizer reports in $reports:" >&2
  for f in "$reports"/*; do echo "== $f" >&2; head -60 "$f" >&2; done
  status=1
fi
[ "$status" -eq 0 ] && echo "sanitize $kind: clean"
exit "$status"
