#!/usr/bin/env bash
# One call on a GPU host, within about six minutes: unpack the carried
# Debian packages into a scratch prefix, build reprox and the GPU benchmark
# against the host's PyTorch libtorch, make the benchmark models, run the
# benchmark twice per model (two processes, to compare their bytes) and print
# one table. Prepare the carried folder here with prepare_carry.sh.
#
#   bash benchmarks/gpu/run_on_device.sh [--carry build/gpu-carry] [--device cuda]
#        [--dtype bfloat16] [--models "smollm2 llama1b"] [--scale full|quick]
#        [--jobs N] [--out DIR]
#
# --scale quick is the rehearsal size (few tokens, small groups), for a dry
# run on a CPU host: `--device cpu --scale quick --models smollm2`, with
# `--dtype float32` where the CPU has no bf16 instructions (AVX2 only).
# Results (every log and table.md) go to --out, default $OUT when set (the
# device call's return folder), else build-gpu/results.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
carry="$root/build/gpu-carry" device=cuda dtype=bfloat16 models="smollm2 llama1b" scale=full
jobs="$(nproc)" out="${OUT:-$root/build-gpu/results}"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --carry) carry="$2" ;;
    --device) device="$2" ;;
    --dtype) dtype="$2" ;;
    --models) models="$2" ;;
    --scale) scale="$2" ;;
    --jobs) jobs="$2" ;;
    --out) out="$2" ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift 2
done
build="$root/build-gpu" deps="$root/build-gpu/deps" work="$root/build-gpu/work"
mkdir -p "$out" "$deps" "$work"
t_start=$SECONDS
step() { echo "== [$((SECONDS - t_start)) s] $*" | tee -a "$out/steps.log" >&2; }

# 1. The carried packages, unpacked (never into /).
step "unpacking $(ls "$carry"/debs/*.deb | wc -l) packages into $deps"
for f in "$carry"/debs/*.deb; do dpkg -x "$f" "$deps"; done
multiarch=usr/lib/x86_64-linux-gnu
export PKG_CONFIG="$deps/usr/bin/pkgconf"
export PKG_CONFIG_LIBDIR="$deps/$multiarch/pkgconfig:$deps/usr/share/pkgconfig"
export PKG_CONFIG_SYSROOT_DIR="$deps"
export CPATH="$deps/usr/include/x86_64-linux-gnu${CPATH:+:$CPATH}"
export LD_LIBRARY_PATH="$deps/$multiarch:$deps/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

# 2. The build, against PyTorch's libtorch where python3 has it (else the
# system's libtorch, as on a CPU rehearsal host).
prefix="$deps/usr"
: >"$out/host.txt"
if torch_prefix="$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null)"; then
  torch_lib="$(python3 -c 'import os, torch; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')"
  prefix="$prefix;$torch_prefix"
  export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$torch_lib"
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda,
    torch.cuda.get_device_name() if torch.cuda.is_available() else "no device")' | tee -a "$out/host.txt"
  export TORCH_CUDA_ARCH_LIST="${TORCH_CUDA_ARCH_LIST:-$(python3 -c 'import torch
c = torch.cuda.get_device_capability() if torch.cuda.is_available() else (9, 0)
print(f"{c[0]}.{c[1]}")')}"
fi
grep -m1 'model name' /proc/cpuinfo | tee -a "$out/host.txt"
command -v nvidia-smi >/dev/null && nvidia-smi -L | tee -a "$out/host.txt"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
step "configuring"
cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DREPROX_BUILD_TESTS=OFF \
  -DREPROX_BUILD_BENCHMARKS=ON "-DCMAKE_PREFIX_PATH=$prefix" -DCMAKE_POLICY_VERSION_MINIMUM=3.5 \
  >"$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
# Where each dependency came from, for the record.
grep -E '^(Boost_DIR|simdjson_DIR|spdlog_DIR|CLI11_DIR|tomlplusplus_DIR|Torch_DIR|REPROX_PROMETHEUS_CORE_LIBRARY|hiredis_LINK_LIBRARIES|OPENSSL_CRYPTO_LIBRARY)' \
  "$build/CMakeCache.txt" >"$out/found.txt" || true
step "building"
targets=(--target reprox reprox_bench_gpu reprox_bench_step_ops)
if ! cmake --build "$build" -j"$jobs" "${targets[@]}" >"$out/build.log" 2>&1; then
  tail -40 "$out/build.log"
  step "build failed; building again without CUDA graphs and libtorch's rms_norm"
  cmake "$build" -DREPROX_CUDA_GRAPHS=OFF -DREPROX_FUSED_NORM=OFF >>"$out/configure.log" 2>&1
  cmake --build "$build" -j"$jobs" "${targets[@]}" >"$out/build-no-graphs.log" 2>&1 ||
    { tail -40 "$out/build-no-graphs.log"; exit 1; }
fi

# 3. The models: random weights, stored in 16 bits, Llama-shaped.
shape_of() {
  case "$1" in
    smollm2) echo "--hidden 576 --layers 30 --heads 9 --kv-heads 3 --intermediate 1536 --vocab-size 49152" ;;
    llama1b) echo "--hidden 2048 --layers 16 --heads 32 --kv-heads 8 --intermediate 8192" ;;
    *) echo "unknown model $1 (smollm2, llama1b)" >&2; exit 2 ;;
  esac
}
for m in $models; do
  if [[ ! -f "$work/$m/model.safetensors" ]]; then
    step "making $m"
    # shellcheck disable=SC2046
    "$build/reprox" make-tiny-model --out "$work/$m" --arch llama --tokenizer "$carry/tokenizer-llama2" \
      $(shape_of "$m") --max-positions 4096 --dtype bf16 --seed 42 2>>"$out/models.log"
  fi
done

# 4. The benchmarks: one decode step apart from the engine (operations per
# step, time against the bound, whether a matrix product's rows depend on
# the row count); then the engine, where process a measures speed and
# digests, process b the digests again and (smollm2) how often an answer
# differs alone and in a group.
if [[ $scale == quick ]]; then
  speed=(--tokens 16 --prompt 16 --concurrency 1,4 --reps 1 --digest-set 4 --bandwidth-mib 64)
  again=(--tokens 16 --prompt 16 --concurrency 1 --reps 1 --digest-set 4 --bandwidth-mib 64)
  compare=(--compare 8 --compare-batch 4 --compare-tokens 4)
  greedy=(--tokens 16 --prompt 16 --concurrency 1,4 --reps 1 --digest-set 2 --bandwidth-mib 64 --temperature 0)
  step_batches=1,4 step_batches_max=4
else
  speed=(--tokens 128 --prompt 64 --concurrency 1,8,32 --reps 2 --digest-set 8)
  again=(--tokens 128 --prompt 64 --concurrency 1 --reps 1 --digest-set 8)
  compare=(--compare 1000 --compare-batch 32 --compare-tokens 8)
  greedy=(--tokens 128 --prompt 64 --concurrency 1,8,32 --reps 1 --digest-set 2 --temperature 0)
  step_batches=1,8,32 step_batches_max=32
fi
bench() {  # NAME LOG ARGS...: a bounded run; a timeout leaves its partial log
  local m=$1 log=$2
  shift 2
  timeout 150 "$build/benchmarks/gpu/reprox_bench_gpu" --model "$work/$m" --device "$device" --dtype "$dtype" "$@" \
    >"$log" 2>&1 || echo "(exit $?)" >>"$log"
}
for m in $models; do
  step "one decode step of $m: operations and time"
  : >"$out/$m.steps.txt"
  # KV slots and fixed-shape steps as the engine keeps them on a GPU (CUDA
  # graphs), slots stepped eagerly, caches of their own, then slots with a
  # 64-token prompt joining every step (as requests keep arriving).
  # The first also checks the device's logits against strict mode on the CPU.
  for variant in "$step_batches_max -1 0 8" "$step_batches_max 0 0 0" "0 0 0 0" "$step_batches_max -1 64 0"; do
    read -r slots fixed joining check <<<"$variant"
    timeout 90 "$build/benchmarks/gpu/reprox_bench_step_ops" --model "$work/$m" --device "$device" \
      --dtype "$dtype" --batches "$step_batches" --kv-slots "$slots" --static-decode "$fixed" \
      --joining "$joining" --check-cpu "$check" >>"$out/$m.steps.txt" 2>&1 || echo "(exit $?)" >>"$out/$m.steps.txt"
  done
  step "benchmark $m, process a"
  bench "$m" "$out/$m.a.txt" "${speed[@]}"
  step "benchmark $m, process b"
  if [[ $m == smollm2 ]]; then bench "$m" "$out/$m.b.txt" "${again[@]}" "${compare[@]}"
  else bench "$m" "$out/$m.b.txt" "${again[@]}"; fi
  step "benchmark $m without CUDA graphs"
  bench "$m" "$out/$m.c.txt" "${speed[@]}" --reps 1 --cuda-graphs 0
  step "benchmark $m, greedy (the argmax taken on the device)"
  bench "$m" "$out/$m.g.txt" "${greedy[@]}"
done
step "done"

# 5. One table.
bash "$root/benchmarks/gpu/table.sh" "$out" $models | tee "$out/table.md"
