#include "benchmarks/kernels/bench_attention.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "benchmarks/kernels/bench_common.hpp"
#include "benchmarks/kernels/timing.hpp"
#include "engine/kernels/kernels.hpp"

namespace reprox::bench {
namespace {

namespace k = reprox::kernels;

// A ~1B Llama shape: 32 query heads over 8 KV heads of 64.
struct Shape {
  int64_t heads = 32, kv_heads = 8, d = 64;
};

// Queries [t, heads, d] at positions offset.., a KV cache [kv_heads, ctx, d].
struct Problem {
  Shape s;
  int64_t t, offset, ctx;
  std::vector<float> q, kc, vc, out, scores;
};

Problem make_problem(std::mt19937& rng, int64_t t, int64_t offset) {
  Problem p;
  p.t = t;
  p.offset = offset;
  p.ctx = offset + t;
  p.q = random_vec(rng, static_cast<size_t>(t * p.s.heads * p.s.d), 1.0f);
  p.kc = random_vec(rng, static_cast<size_t>(p.s.kv_heads * p.ctx * p.s.d), 1.0f);
  p.vc = random_vec(rng, static_cast<size_t>(p.s.kv_heads * p.ctx * p.s.d), 1.0f);
  p.out.assign(static_cast<size_t>(t * p.s.heads * p.s.d), 0.0f);
  p.scores.assign(static_cast<size_t>(t * p.ctx), 0.0f);
  return p;
}

void strict_attention(Problem& p) {
  k::AttentionArgs a;
  a.q = p.q.data();
  a.n_heads = p.s.heads;
  a.t = p.t;
  a.head_dim = p.s.d;
  a.q_head_stride = p.s.d;
  a.q_token_stride = p.s.heads * p.s.d;
  a.k = p.kc.data();
  a.v = p.vc.data();
  a.n_kv_heads = p.s.kv_heads;
  a.kv_head_stride = p.ctx * p.s.d;
  a.q_offset = p.offset;
  a.out = p.out.data();
  k::causal_attention(a);
}

// Per head: S = Q K^T / sqrt(d) (sgemm), causal softmax per row, O = P V (sgemm).
void blas_attention(Problem& p) {
  const int64_t d = p.s.d, group = p.s.heads / p.s.kv_heads, ld = p.s.heads * d;
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  for (int64_t h = 0; h < p.s.heads; ++h) {
    const float* kh = p.kc.data() + (h / group) * p.ctx * d;
    const float* vh = p.vc.data() + (h / group) * p.ctx * d;
    cblas_sgemm(kRowMajor, kNoTrans, kTrans, static_cast<int>(p.t), static_cast<int>(p.ctx), static_cast<int>(d),
                scale, p.q.data() + h * d, static_cast<int>(ld), kh, static_cast<int>(d), 0.0f, p.scores.data(),
                static_cast<int>(p.ctx));
    for (int64_t i = 0; i < p.t; ++i) {
      float* row = p.scores.data() + i * p.ctx;
      const int64_t keys = p.offset + i + 1;
      const float mx = *std::max_element(row, row + keys);
      float sum = 0;
      for (int64_t j = 0; j < keys; ++j) sum += (row[j] = std::exp(row[j] - mx));
      for (int64_t j = 0; j < keys; ++j) row[j] /= sum;
      std::fill(row + keys, row + p.ctx, 0.0f);
    }
    cblas_sgemm(kRowMajor, kNoTrans, kNoTrans, static_cast<int>(p.t), static_cast<int>(d), static_cast<int>(p.ctx),
                1.0f, p.scores.data(), static_cast<int>(p.ctx), vh, static_cast<int>(d), 0.0f, p.out.data() + h * d,
                static_cast<int>(ld));
  }
}

// Seconds per call of fn on the active ISA and on the scalar path.
std::pair<double, double> time_isa_and_scalar(const std::function<void()>& fn) {
  const k::Isa isa = k::active_isa();
  const double vec_s = time_call(fn);
  k::set_isa(k::Isa::kScalar);
  const double scalar_s = time_call(fn, 0.05, 3);
  k::set_isa(isa);
  return {vec_s, scalar_s};
}

void print_header(const char* first) {
  std::printf("\n%-34s %9s %9s %9s %8s %8s %8s\n", first, "isa_ms", "scalar_ms", "blas_ms", "speedup", "ratio",
              "kv_GB/s");
}

void attention_row(std::mt19937& rng, int64_t t, int64_t offset, double read_gbps) {
  Problem p = make_problem(rng, t, offset);
  const auto [vec_s, scalar_s] = time_isa_and_scalar([&] { strict_attention(p); });
  const double blas_s = time_call([&] { blas_attention(p); });
  const double kv_bytes = 2.0 * 4.0 * static_cast<double>(p.s.kv_heads * p.ctx * p.s.d);
  const std::string label = "t=" + std::to_string(t) + " after " + std::to_string(offset);
  std::printf("%-34s %9.3f %9.3f %9.3f %8.2f %8.3f %8.2f", label.c_str(), vec_s * 1e3, scalar_s * 1e3, blas_s * 1e3,
              scalar_s / vec_s, vec_s / blas_s, kv_bytes / vec_s * 1e-9);
  if (t == 1) std::printf("  (%.2f of the read stream)", kv_bytes / vec_s * 1e-9 / read_gbps);
  std::printf("\n");
}

void rowwise_row(const std::string& label, const std::function<void()>& fn, double bytes) {
  const auto [vec_s, scalar_s] = time_isa_and_scalar(fn);
  std::printf("%-34s %9.3f %9.3f %9s %8.2f %8s %8.2f\n", label.c_str(), vec_s * 1e3, scalar_s * 1e3, "-",
              scalar_s / vec_s, "-", bytes / vec_s * 1e-9);
}

}  // namespace

void bench_attention(bool quick, double read_gbps) {
  std::mt19937 rng(7);
  std::printf("\nattention, 32 heads / 8 KV heads of 64 (speedup: scalar / isa; ratio: isa / blas, lower is faster)");
  print_header("-- decode, one query per head");
  for (int64_t ctx : quick ? std::vector<int64_t>{2048} : std::vector<int64_t>{512, 2048, 8192}) {
    attention_row(rng, 1, ctx - 1, read_gbps);
  }
  std::printf("-- prefill\n");
  for (int64_t t : quick ? std::vector<int64_t>{128} : std::vector<int64_t>{128, 512}) {
    attention_row(rng, t, 0, read_gbps);
  }
  std::printf("-- prefill after a cached prefix (a later turn)\n");
  attention_row(rng, 128, quick ? 512 : 2048, read_gbps);

  print_header("-- row-wise, 128 rows");
  const int64_t rows = 128, d = 2048, ff = 8192;
  std::vector<float> x = random_vec(rng, static_cast<size_t>(rows * d), 1.0f), w = random_vec(rng, d, 1.0f);
  std::vector<float> y(x.size());
  rowwise_row("rms_norm d=2048", [&] { k::rms_norm(x.data(), rows, d, w.data(), 1e-5f, y.data()); },
              2.0 * 4 * rows * d);
  std::vector<float> gate = random_vec(rng, static_cast<size_t>(rows * ff), 2.0f), up = gate, act(gate.size());
  rowwise_row("silu_mul 8192", [&] { k::silu_mul(gate.data(), up.data(), rows * ff, act.data()); },
              3.0 * 4 * rows * ff);
  std::vector<float> qk = random_vec(rng, static_cast<size_t>(rows * 40 * 64), 1.0f);
  const std::vector<float> cs = random_vec(rng, static_cast<size_t>(rows * 32), 1.0f), sn = cs;
  rowwise_row("rope 40 heads of 64", [&] {
    k::apply_rope(qk.data(), 40, rows, 64, 64, 40 * 64, cs.data(), sn.data());
  }, 2.0 * 4 * rows * 40 * 64);
}

}  // namespace reprox::bench
