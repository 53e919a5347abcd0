// Strict-mode kernel cost against OpenBLAS sgemm (the BLAS Debian's libtorch
// calls for torch::linear once libopenblas0 is installed), in the same run.
//
//   reprox_bench_kernels [--threads N] [--quick] [--weight-types] [--attention]
//   (--weight-types: only the f16 / bf16 / q8 section; --attention: only
//   attention and the row-wise ops)
//
// Prints, per shape: strict and OpenBLAS time, GFLOP/s, weight GB/s and the
// strict/OpenBLAS time ratio; decode (M = 1) both with the weights hot in
// cache and cold (cycling through copies larger than the caches), with
// memcpy and read bandwidth as the anchors. Then the strict linear with f16,
// bf16 and q8 weights against f32 (bench_weight_types.hpp), and attention and
// the row-wise ops against their scalar path and a BLAS attention
// (bench_attention.hpp).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "benchmarks/kernels/bench_attention.hpp"
#include "benchmarks/kernels/bench_common.hpp"
#include "benchmarks/kernels/bench_weight_types.hpp"
#include "benchmarks/kernels/timing.hpp"
#include "engine/kernels/kernels.hpp"

namespace {

using reprox::bench::kNoTrans;
using reprox::bench::kRowMajor;
using reprox::bench::kTrans;
using reprox::bench::time_call;

std::vector<float> random_vec(std::mt19937& rng, size_t n) { return reprox::bench::random_vec(rng, n, 0.05f); }

void openblas_linear(const float* x, int m, int k, const float* w, int n, float* y) {
  cblas_sgemm(kRowMajor, kNoTrans, kTrans, m, n, k, 1.0f, x, k, w, k, 0.0f, y, n);
}

struct Row {
  std::string label;
  double strict_s, blas_s, flops, weight_bytes;
};

void print_row(const Row& r) {
  std::printf("%-34s %9.3f %9.3f %8.1f %8.1f %8.2f %8.2f %7.3f\n", r.label.c_str(), r.strict_s * 1e3, r.blas_s * 1e3,
              r.flops / r.strict_s * 1e-9, r.flops / r.blas_s * 1e-9, r.weight_bytes / r.strict_s * 1e-9,
              r.weight_bytes / r.blas_s * 1e-9, r.strict_s / r.blas_s);
}

// Hot: one weight matrix, reused every call.
Row bench_hot(std::mt19937& rng, int m, int k, int n) {
  const std::vector<float> x = random_vec(rng, size_t(m) * k), w = random_vec(rng, size_t(n) * k);
  std::vector<float> y(size_t(m) * n);
  Row r;
  r.label = "M=" + std::to_string(m) + " K=" + std::to_string(k) + " N=" + std::to_string(n);
  r.strict_s = time_call([&] { reprox::kernels::linear(x.data(), m, k, w.data(), n, nullptr, y.data()); });
  r.blas_s = time_call([&] { openblas_linear(x.data(), m, k, w.data(), n, y.data()); });
  r.flops = 2.0 * m * k * n;
  r.weight_bytes = 4.0 * k * n;
  return r;
}

// Cold: cycle through copies of the weights totalling `total_bytes`, so each
// call streams its matrix from DRAM like a decode step over all layers.
Row bench_cold(std::mt19937& rng, int m, int k, int n, size_t total_bytes) {
  const size_t per = size_t(n) * k;
  const size_t copies = std::max<size_t>(2, total_bytes / (per * 4));
  const std::vector<float> x = random_vec(rng, size_t(m) * k), w0 = random_vec(rng, per);
  std::vector<float> w(per * copies);
  for (size_t c = 0; c < copies; ++c) std::copy(w0.begin(), w0.end(), w.begin() + c * per);
  std::vector<float> y(size_t(m) * n);
  size_t next = 0;
  Row r;
  r.label = "cold M=" + std::to_string(m) + " K=" + std::to_string(k) + " N=" + std::to_string(n);
  r.strict_s = time_call([&] {
    reprox::kernels::linear(x.data(), m, k, w.data() + (next++ % copies) * per, n, nullptr, y.data());
  }, 0.2);
  r.blas_s = time_call([&] { openblas_linear(x.data(), m, k, w.data() + (next++ % copies) * per, n, y.data()); }, 0.2);
  r.flops = 2.0 * m * k * n;
  r.weight_bytes = 4.0 * k * n;
  return r;
}

// Prints memcpy and read-only stream bandwidth; returns the read-only one, GB/s.
double bench_bandwidth(size_t bytes) {
  std::vector<char> src(bytes, 1), dst(bytes, 2);
  const double copy_s = time_call([&] { std::memcpy(dst.data(), src.data(), bytes); }, 0.3, 3);
  const std::vector<uint64_t> words(bytes / 8, 3);
  volatile uint64_t sink = 0;
  const double read_s = time_call([&] {
    uint64_t acc = 0;
    for (uint64_t v : words) acc += v;  // integer sum: vectorized, read-bound
    sink = acc;
  }, 0.3, 3);
  (void)sink;
  std::printf("memcpy %zu MB: %.1f GB/s (read+write), %.1f GB/s copied; read-only stream: %.1f GB/s\n", bytes >> 20,
              2.0 * bytes / copy_s * 1e-9, bytes / copy_s * 1e-9, bytes / read_s * 1e-9);
  return bytes / read_s * 1e-9;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 1;
  bool quick = false, weight_types_only = false, attention_only = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--threads" && i + 1 < argc) threads = std::atoi(argv[++i]);
    if (arg == "--quick") quick = true;
    if (arg == "--weight-types") weight_types_only = true;
    if (arg == "--attention") attention_only = true;
  }
  reprox::kernels::set_num_threads(threads);
  openblas_set_num_threads(threads);
  std::printf("strict kernels: isa %s, %d thread(s); OpenBLAS sgemm %d thread(s); mode %s\n",
              reprox::kernels::isa_name(reprox::kernels::active_isa()), threads, threads,
              reprox::kernels::numeric_mode_id());
  const double read_gbps = bench_bandwidth(size_t(512) << 20);
  if (attention_only) {
    reprox::bench::bench_attention(quick, read_gbps);
    return 0;
  }
  if (weight_types_only) {
    reprox::bench::bench_weight_types(quick);
    return 0;
  }
  std::printf("\n%-34s %9s %9s %8s %8s %8s %8s %7s\n", "shape (y = x W^T)", "strict_ms", "blas_ms", "s_GF/s",
              "b_GF/s", "s_GB/s", "b_GB/s", "ratio");
  std::mt19937 rng(1);
  struct Kn {
    int k, n;
  };
  const std::vector<Kn> layers = {{576, 576}, {576, 192}, {576, 1536}, {1536, 576}, {64, 128}, {128, 64}};
  std::printf("-- decode, weights hot in cache\n");
  for (const Kn& s : layers) print_row(bench_hot(rng, 1, s.k, s.n));
  for (int m : {4, 8, 16}) print_row(bench_hot(rng, m, 576, 1536));
  std::printf("-- decode, weights cold (streamed from DRAM)\n");
  for (const Kn& s : {Kn{576, 576}, Kn{576, 1536}, Kn{1536, 576}}) print_row(bench_cold(rng, 1, s.k, s.n, size_t(768) << 20));
  print_row(bench_cold(rng, 1, 576, 151669, size_t(768) << 20));
  std::printf("-- batched decode (M rows, one per sequence), weights cold\n");
  for (int m : {2, 4, 8, 16}) print_row(bench_cold(rng, m, 576, 1536, size_t(768) << 20));
  std::printf("-- prefill\n");
  for (int m : quick ? std::vector<int>{128} : std::vector<int>{128, 512}) {
    for (const Kn& s : layers) print_row(bench_hot(rng, m, s.k, s.n));
  }
  std::printf("-- lm_head\n");
  print_row(bench_hot(rng, 8, 576, 151669));
  reprox::bench::bench_weight_types(quick);
  reprox::bench::bench_attention(quick, read_gbps);
  return 0;
}
