#!/usr/bin/env bash
# Installs what reprox needs on Debian 12 (packages and the npm fixtures),
# then configures and builds the reprox binary into build/. Idempotent: a
# second run only rebuilds what changed. Usage: bash conf/setup.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

packages=(
  build-essential cmake pkg-config git
  libboost-dev libboost-system-dev libhiredis-dev libtorch-dev libopenblas0-openmp
  libsimdjson-dev prometheus-cpp-dev libssl-dev libtomlplusplus-dev libcli11-dev
  libspdlog-dev libpcre2-dev libutf8proc-dev libgtest-dev libgmock-dev libbenchmark-dev
  redis-server redis-tools wrk nginx nodejs chromium clang libclang-rt-14-dev
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Debian's nodejs needs its npm package; other nodejs builds ship npm.
command -v npm >/dev/null 2>&1 || missing+=(npm)
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

bash tests/setup_npm.sh

# A unity build (CMake batches each target's sources into a few translation
# units) compiles in about 60% of the time on two cores; reconfigure with
# -DCMAKE_UNITY_BUILD=OFF for file-by-file rebuilds while editing.
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_UNITY_BUILD=ON >/dev/null
# Only the binary: `reprox serve` need not wait for the tests and benchmarks,
# which tests/run.sh builds.
cmake --build build -j2 --target reprox
# The embedded default model (random weights, real Qwen3 tokenizer).
[ -f build/reprox-tiny-qwen3/config.json ] || build/reprox make-tiny-model --out build/reprox-tiny-qwen3
