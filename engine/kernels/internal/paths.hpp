#pragma once
// Per-ISA entry points behind the public functions in kernels.hpp. Each one
// implements the canonical sequence of internal/canonical.hpp; the dispatchers
// pick one by active_isa(). The AVX2 paths need AVX2 and FMA (gemm_avx2 with
// f16 weights F16C too), as detect_isa() checks.
#include <cstdint>

#include "engine/kernels/kernels.hpp"

namespace reprox::kernels::internal {

// w: weight row c starts at w + c * w_row_bytes (>= weight_row_bytes(wtype, k)).
struct GemmArgs {
  const float* x;
  int64_t m, k, x_stride;
  const uint8_t* w;
  WeightType wtype;
  int64_t w_row_bytes;
  int64_t n;
  const float* bias;
  float* y;
  int64_t y_stride;
};

// Computes y columns [n_begin, n_end) for all rows. gemm_avx2 with kF16
// weights needs F16C (has_f16c()); the dispatcher checks.
void gemm_scalar(const GemmArgs& a, int64_t n_begin, int64_t n_end);
void gemm_avx2(const GemmArgs& a, int64_t n_begin, int64_t n_end);
void gemm_avx512(const GemmArgs& a, int64_t n_begin, int64_t n_end);
bool has_f16c();

// The distance between row starts of w [*, k]: w.row_bytes, or the packed
// weight_row_bytes(w.type, k) when that is 0.
int64_t row_distance(const WeightMatrix& w, int64_t k);

// One (head, query) pair per index in [begin, end), index = h * t + i.
// scratch: at least attention_scratch_floats(a) floats. The
// vector paths run up to kAttentionQueryBlock queries over one KV head
// together (internal/attention_blocks.hpp).
constexpr int64_t kAttentionQueryBlock = 16;
inline int64_t attention_scratch_floats(const AttentionArgs& a) {
  return kAttentionQueryBlock * ((a.q_offset + a.t + 15) / 16 * 16 + a.head_dim);
}
void attention_scalar(const AttentionArgs& a, int64_t begin, int64_t end, float* scores);
void attention_avx2(const AttentionArgs& a, int64_t begin, int64_t end, float* scores);
void attention_avx512(const AttentionArgs& a, int64_t begin, int64_t end, float* scores);

void rms_norm_scalar(const float* x, int64_t rows, int64_t d, const float* weight, float eps, float* y);
void rms_norm_avx2(const float* x, int64_t rows, int64_t d, const float* weight, float eps, float* y);
void rms_norm_avx512(const float* x, int64_t rows, int64_t d, const float* weight, float eps, float* y);
void layer_norm_scalar(const float* x, int64_t rows, int64_t d, const float* weight, const float* bias, float eps,
                       float* y);
void layer_norm_avx2(const float* x, int64_t rows, int64_t d, const float* weight, const float* bias, float eps,
                     float* y);
void layer_norm_avx512(const float* x, int64_t rows, int64_t d, const float* weight, const float* bias, float eps,
                       float* y);
void silu_mul_scalar(const float* gate, const float* up, int64_t count, float* out);
void silu_mul_avx2(const float* gate, const float* up, int64_t count, float* out);
void silu_mul_avx512(const float* gate, const float* up, int64_t count, float* out);
void gelu_tanh_scalar(const float* x, int64_t count, float* out);
void gelu_tanh_avx2(const float* x, int64_t count, float* out);
void gelu_tanh_avx512(const float* x, int64_t count, float* out);
void rope_scalar(float* x, int64_t heads, int64_t t, int64_t d, int64_t head_stride, int64_t token_stride,
                 const float* cos, const float* sin);
void rope_avx2(float* x, int64_t heads, int64_t t, int64_t d, int64_t head_stride, int64_t token_stride,
               const float* cos, const float* sin);
void rope_avx512(float* x, int64_t heads, int64_t t, int64_t d, int64_t head_stride, int64_t token_stride,
                 const float* cos, const float* sin);

}  // namespace reprox::kernels::internal
