#!/usr/bin/env bash
# Runs every fuzz target for a short while on a scratch copy of its
# committed corpus (the fuzzer never writes into tests/fuzz/corpus), with
# its dictionary, JOBS (default 2) targets at a time. Prints one line per
# target and exits non-zero when any target finds a crash, a leak, a timeout
# or runs out of memory.
#   tests/fuzz/run_smoke.sh [seconds=30] [build-dir]
# Without a build dir, it configures build-fuzz with clang and
# -DREPROX_FUZZ=ON (see tests/fuzz/README.md) and builds the targets first;
# a given build dir must hold them already, in <build-dir>/fuzz. Crash inputs and logs are kept in
# <build-dir>/fuzz-smoke/<target>/.
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
seconds="${1:-30}"
build="${2:-$root/build-fuzz}"
case "$build" in /*) ;; *) build="$PWD/$build" ;; esac
fuzz_dir="$root/tests/fuzz"
if [ -z "${2:-}" ]; then
  launcher=()
  command -v ccache >/dev/null 2>&1 && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  CC=clang CXX=clang++ cmake -S "$root" -B "$build" -DREPROX_FUZZ=ON -DREPROX_WITH_TORCH=OFF \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_UNITY_BUILD=ON "${launcher[@]}" >/dev/null || exit 1
  cmake --build "$build" -j"${JOBS:-2}" --target reprox_fuzz_all || exit 1
fi
targets=(fuzz_http_request fuzz_chat_request fuzz_tokenizer fuzz_template fuzz_safetensors fuzz_sse
         fuzz_entry_codec fuzz_config fuzz_json_machine)

# Runs one target; writes its table row to <work>/row and exits non-zero on a
# finding.
run_target() {
  local t="$1" bin="$build/fuzz/$1" work="$build/fuzz-smoke/$1"
  rm -rf "$work"
  mkdir -p "$work/corpus" "$work/artifacts"
  if [ ! -x "$bin" ]; then
    printf '%-20s %8s %12s %6s  %s\n' "$t" - - - "MISSING ($bin)" >"$work/row"
    return 1
  fi
  cp "$fuzz_dir/corpus/$t/"* "$work/corpus/" 2>/dev/null
  local dict=()
  [ -f "$fuzz_dir/dict/$t.dict" ] && dict=("-dict=$fuzz_dir/dict/$t.dict")
  local start rc elapsed execs files result kind artifact
  start=$(date +%s)
  "$bin" "$work/corpus" "${dict[@]}" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=25 \
    -print_final_stats=1 -artifact_prefix="$work/artifacts/" >"$work/log" 2>&1
  rc=$?
  elapsed=$(( $(date +%s) - start ))
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log" | tail -1)
  files=$(find "$work/corpus" -type f | wc -l)
  if [ "$rc" -eq 0 ]; then
    result=ok
  else
    kind=$(grep -m1 -oE 'ERROR: (libFuzzer|AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer): [a-z-]+|runtime error|property violated|out-of-memory|timeout' "$work/log")
    artifact=$(ls "$work/artifacts" 2>/dev/null | head -1)
    result="FAIL rc=$rc ${kind:-see log} ${artifact:+input $work/artifacts/$artifact} (log $work/log)"
  fi
  printf '%-20s %8s %12s %5ss  %s\n' "$t" "$files" "${execs:-?}" "$elapsed" "$result" >"$work/row"
  [ "$rc" -eq 0 ]
}

# Each fuzzer is single-threaded: run JOBS (default 2) of them at once.
jobs="${JOBS:-2}"
pids=()
for t in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
  run_target "$t" &
  pids+=($!)
done
failed=0
for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
printf '%-20s %8s %12s %6s  %s\n' target corpus executions time result
for t in "${targets[@]}"; do cat "$build/fuzz-smoke/$t/row" 2>/dev/null || { echo "$t: no result"; failed=1; }; done
exit "$failed"
