// Public entry points: ISA selection, thread fan-out, and the calls into the
// per-ISA paths (internal/paths.hpp).
#include <algorithm>
#include <atomic>
#include <vector>

#include "engine/kernels/internal/paths.hpp"
#include "engine/kernels/internal/thread_pool.hpp"
#include "engine/kernels/kernels.hpp"

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

namespace {

using GemmPath = void (*)(const internal::GemmArgs&, int64_t, int64_t);

GemmPath gemm_path(WeightType type) {
  if (active_isa() == Isa::kAvx512) return internal::gemm_avx512;
  if (active_isa() == Isa::kAvx2 && (type != WeightType::kF16 || internal::has_f16c())) return internal::gemm_avx2;
  return internal::gemm_scalar;
}

internal::GemmArgs gemm_args(const float* x, int64_t m, int64_t k, int64_t x_stride, const WeightMatrix& w,
                             int64_t n, const float* bias, float* y, int64_t y_stride) {
  return {x, m, k, x_stride, static_cast<const uint8_t*>(w.data), w.type, internal::row_distance(w, k), n, bias,
          y, y_stride};
}

// Runs every GEMM in `gemms` (same x) in one fan-out. The columns of all of
// them, in 16-column units, are cut into a few more tasks than threads so
// that a slow thread does not hold the others up. Column split only: every
// element is computed the same way whichever thread owns it, so the bits do
// not depend on the split. Small problems stay on the calling thread.
void run_gemms(const internal::GemmArgs* gemms, int count) {
  int64_t units = 0, flops = 0;
  for (int g = 0; g < count; ++g) {
    units += (gemms[g].n + 15) / 16;
    flops += gemms[g].m * gemms[g].n * gemms[g].k;
  }
  if (units == 0) return;
  const int threads = num_threads();
  const int parts = flops < (int64_t{1} << 17) || threads <= 1
                        ? 1
                        : static_cast<int>(std::min<int64_t>(units, int64_t{4} * threads));
  auto run_part = [&](int i) {
    const int64_t u_begin = split_point(units, parts, 1, i), u_end = split_point(units, parts, 1, i + 1);
    int64_t base = 0;  // first unit of gemms[g]
    for (int g = 0; g < count && base < u_end; ++g) {
      const int64_t g_units = (gemms[g].n + 15) / 16;
      const int64_t lo = std::max(u_begin, base) - base, hi = std::min(u_end, base + g_units) - base;
      if (lo < hi && gemms[g].m > 0) gemm_path(gemms[g].wtype)(gemms[g], lo * 16, std::min(gemms[g].n, hi * 16));
      base += g_units;
    }
  };
  if (parts == 1) {
    run_part(0);
    return;
  }
  internal::ThreadPool::instance().run(parts, run_part);
}

}  // namespace

void linear(const float* x, int64_t m, int64_t k, int64_t x_stride, const WeightMatrix& w, int64_t n,
            const float* bias, float* y, int64_t y_stride) {
  if (m <= 0 || n <= 0) return;
  const internal::GemmArgs args = gemm_args(x, m, k, x_stride, w, n, bias, y, y_stride);
  run_gemms(&args, 1);
}

void linear(const float* x, int64_t m, int64_t k, int64_t x_stride, const float* w, int64_t n, const float* bias,
            float* y, int64_t y_stride) {
  linear(x, m, k, x_stride, WeightMatrix(w), n, bias, y, y_stride);
}

void linear_many(const float* x, int64_t m, int64_t k, const Projection* outs, int count) {
  if (m <= 0 || count <= 0) return;
  std::vector<internal::GemmArgs> gemms;
  gemms.reserve(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) gemms.push_back(gemm_args(x, m, k, k, outs[i].w, outs[i].n, outs[i].bias, outs[i].y, outs[i].n));
  run_gemms(gemms.data(), count);
}

void linear(const float* x, int64_t m, int64_t k, const float* w, int64_t n, const float* bias, float* y) {
  linear(x, m, k, k, w, n, bias, y, n);
}

void rms_norm(const float* x, int64_t rows, int64_t d, const float* weight, float eps, float* y) {
  if (active_isa() == Isa::kAvx512) internal::rms_norm_avx512(x, rows, d, weight, eps, y);
  else if (active_isa() == Isa::kAvx2) internal::rms_norm_avx2(x, rows, d, weight, eps, y);
  else internal::rms_norm_scalar(x, rows, d, weight, eps, y);
}

void layer_norm(const float* x, int64_t rows, int64_t d, const float* weight, const float* bias, float eps,
                float* y) {
  if (active_isa() == Isa::kAvx512) internal::layer_norm_avx512(x, rows, d, weight, bias, eps, y);
  else if (active_isa() == Isa::kAvx2) internal::layer_norm_avx2(x, rows, d, weight, bias, eps, y);
  else internal::layer_norm_scalar(x, rows, d, weight, bias, eps, y);
}

void silu_mul(const float* gate, const float* up, int64_t count, float* out) {
  if (active_isa() == Isa::kAvx512) internal::silu_mul_avx512(gate, up, count, out);
  else if (active_isa() == Isa::kAvx2) internal::silu_mul_avx2(gate, up, count, out);
  else internal::silu_mul_scalar(gate, up, count, out);
}

void gelu_tanh(const float* x, int64_t count, float* out) {
  if (active_isa() == Isa::kAvx512) internal::gelu_tanh_avx512(x, count, out);
  else if (active_isa() == Isa::kAvx2) internal::gelu_tanh_avx2(x, count, out);
  else internal::gelu_tanh_scalar(x, count, out);
}

void apply_rope(float* x, int64_t heads, int64_t t, int64_t d, int64_t head_stride, int64_t token_stride,
                const float* cos, const float* sin) {
  if (active_isa() == Isa::kAvx512) internal::rope_avx512(x, heads, t, d, head_stride, token_stride, cos, sin);
  else if (active_isa() == Isa::kAvx2) internal::rope_avx2(x, heads, t, d, head_stride, token_stride, cos, sin);
  else internal::rope_scalar(x, heads, t, d, head_stride, token_stride, cos, sin);
}

void causal_attention(const AttentionArgs& a) {
  const int64_t items = a.n_heads * a.t;
  if (items <= 0) return;
  const int64_t scratch = internal::attention_scratch_floats(a);
  void (*path)(const AttentionArgs&, int64_t, int64_t, float*) = internal::attention_scalar;
  if (active_isa() == Isa::kAvx512) path = internal::attention_avx512;
  if (active_isa() == Isa::kAvx2) path = internal::attention_avx2;
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
