// Public entry points: ISA selection, thread fan-out, and the calls into the
// per-ISA paths (internal/paths.hpp).
#include <algorithm>
#include <atomic>
#include <vector>

#include "internal/paths.hpp"
#include "internal/thread_pool.hpp"
#include "kernels.hpp"

namespace reprox::kernels {
namespace {

Isa detect_isa() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("fma")) {
    return Isa::kAvx512;
  }
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Isa::kAvx2;
  return Isa::kScalar;
}

std::atomic<int>& active_isa_slot() {
  static std::atomic<int> slot{static_cast<int>(detect_isa())};
  return slot;
}

// Splits [0, count) into `parts` contiguous ranges whose boundaries are
// multiples of `align`; returns the boundary of part i.
int64_t split_point(int64_t count, int parts, int64_t align, int i) {
  const int64_t units = (count + align - 1) / align;
  return std::min(count, units * i / parts * align);
}

}  // namespace

Isa best_isa() {
  static const Isa best = detect_isa();
  return best;
}

Isa active_isa() { return static_cast<Isa>(active_isa_slot().load(std::memory_order_relaxed)); }

Isa set_isa(Isa isa) {
  const Isa chosen = static_cast<int>(isa) > static_cast<int>(best_isa()) ? best_isa() : isa;
  active_isa_slot().store(static_cast<int>(chosen), std::memory_order_relaxed);
  return chosen;
}

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::kAvx512: return "avx512";
    case Isa::kAvx2: return "avx2";
    default: return "scalar";
  }
}

void set_num_threads(int threads) { internal::ThreadPool::instance().set_threads(threads); }
int num_threads() { return internal::ThreadPool::instance().threads(); }

void parallel_for(int tasks, const std::function<void(int)>& fn) { internal::ThreadPool::instance().run(tasks, fn); }

const char* numeric_mode_id() { return "strict-v1:dot16-fma-tree,exp-t7,attn-2pass"; }

void linear(const float* x, int64_t m, int64_t k, int64_t x_stride, const float* w, int64_t n, const float* bias,
            float* y, int64_t y_stride) {
  if (m <= 0 || n <= 0) return;
  const internal::GemmArgs args{x, m, k, x_stride, w, n, bias, y, y_stride};
  void (*path)(const internal::GemmArgs&, int64_t, int64_t) = internal::gemm_scalar;
  if (active_isa() == Isa::kAvx512) path = internal::gemm_avx512;
  else if (active_isa() == Isa::kAvx2) path = internal::gemm_avx2;
  // Column split only: every element is computed the same way whichever
  // thread owns it. Small problems stay on the calling thread.
  const int64_t flops = m * n * k;
  int parts = static_cast<int>(std::min<int64_t>(num_threads(), (n + 15) / 16));
  if (flops < (int64_t{1} << 17)) parts = 1;
  if (parts <= 1) {
    path(args, 0, n);
    return;
  }
  internal::ThreadPool::instance().run(parts, [&](int i) {
    const int64_t begin = split_point(n, parts, 16, i), end = split_point(n, parts, 16, i + 1);
    if (begin < end) path(args, begin, end);
  });
}

void linear(const float* x, int64_t m, int64_t k, const float* w, int64_t n, const float* bias, float* y) {
  linear(x, m, k, k, w, n, bias, y, n);
}

void rms_norm(const float* x, int64_t rows, int64_t d, const float* weight, float eps, float* y) {
  if (active_isa() == Isa::kAvx512) internal::rms_norm_avx512(x, rows, d, weight, eps, y);
  else internal::rms_norm_scalar(x, rows, d, weight, eps, y);
}

void layer_norm(const float* x, int64_t rows, int64_t d, const float* weight, const float* bias, float eps,
                float* y) {
  if (active_isa() == Isa::kAvx512) internal::layer_norm_avx512(x, rows, d, weight, bias, eps, y);
  else internal::layer_norm_scalar(x, rows, d, weight, bias, eps, y);
}

void silu_mul(const float* gate, const float* up, int64_t count, float* out) {
  if (active_isa() == Isa::kAvx512) internal::silu_mul_avx512(gate, up, count, out);
  else internal::silu_mul_scalar(gate, up, count, out);
}

void gelu_tanh(const float* x, int64_t count, float* out) {
  if (active_isa() == Isa::kAvx512) internal::gelu_tanh_avx512(x, count, out);
  else internal::gelu_tanh_scalar(x, count, out);
}

void apply_rope(float* x, int64_t heads, int64_t t, int64_t d, int64_t head_stride, int64_t token_stride,
                const float* cos, const float* sin) {
  if (active_isa() == Isa::kAvx512) internal::rope_avx512(x, heads, t, d, head_stride, token_stride, cos, sin);
  else internal::rope_scalar(x, heads, t, d, head_stride, token_stride, cos, sin);
}

void causal_attention(const AttentionArgs& a) {
  const int64_t items = a.n_heads * a.t;
  if (items <= 0) return;
  const int64_t scratch = (a.q_offset + a.t + 15) / 16 * 16;
  void (*path)(const AttentionArgs&, int64_t, int64_t, float*) = internal::attention_scalar;
  if (active_isa() == Isa::kAvx512) path = internal::attention_avx512;
  if (a.on_calling_thread) {
    thread_local std::vector<float> scores;
    if (static_cast<int64_t>(scores.size()) < scratch) scores.resize(static_cast<size_t>(scratch));
    path(a, 0, items, scores.data());
    return;
  }
  const int64_t work = items * (a.q_offset + a.t) * a.head_dim;
  const int parts = work < (int64_t{1} << 15) ? 1 : static_cast<int>(std::min<int64_t>(num_threads(), items));
  internal::ThreadPool::instance().run(parts, [&](int i) {
    thread_local std::vector<float> scores;
    if (static_cast<int64_t>(scores.size()) < scratch) scores.resize(static_cast<size_t>(scratch));
    const int64_t begin = split_point(items, parts, 1, i), end = split_point(items, parts, 1, i + 1);
    if (begin < end) path(a, begin, end, scores.data());
  });
}

}  // namespace reprox::kernels
