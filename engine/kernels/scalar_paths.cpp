// Portable paths: the canonical sequences of internal/canonical.hpp applied
// element by element. Compiled without vector ISA flags and with
// -ffp-contract=off, so every fused multiply-add is an explicit std::fma.
#include <cmath>
#include <limits>
#include <vector>
#include <algorithm>

#include "engine/kernels/internal/canonical.hpp"
#include "engine/kernels/internal/paths.hpp"

namespace reprox::kernels::internal {

// Non-fp32 weights: each column is widened to fp32 values first (exact for
// f16/bf16, one rounding per weight for q8), then the fp32 dot.
void gemm_scalar(const GemmArgs& a, int64_t n_begin, int64_t n_end) {
  thread_local std::vector<float> wide;
  if (a.wtype != WeightType::kF32 && static_cast<int64_t>(wide.size()) < a.k) wide.resize(static_cast<size_t>(a.k));
  for (int64_t c = n_begin; c < n_end; ++c) {
    const uint8_t* row = a.w + c * a.w_row_bytes;
    const float* w = reinterpret_cast<const float*>(row);
    if (a.wtype != WeightType::kF32) {
      canonical::widen_row(static_cast<int>(a.wtype), row, a.k, wide.data());
      w = wide.data();
    }
    for (int64_t r = 0; r < a.m; ++r) {
      const float dot = canonical::dot(a.x + r * a.x_stride, w, a.k);
      a.y[r * a.y_stride + c] = a.bias != nullptr ? dot + a.bias[c] : dot;
    }
  }
}

void rms_norm_scalar(const float* x, int64_t rows, int64_t d, const float* weight, float eps, float* y) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * d;
    float* yr = y + r * d;
    const float mean_sq = canonical::dot(xr, xr, d) / static_cast<float>(d);
    const float inv = 1.0f / std::sqrt(mean_sq + eps);
    for (int64_t j = 0; j < d; ++j) yr[j] = (xr[j] * inv) * weight[j];
  }
}

void layer_norm_scalar(const float* x, int64_t rows, int64_t d, const float* weight, const float* bias, float eps,
                       float* y) {
  std::vector<float> centered(static_cast<size_t>(d));
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * d;
    float* yr = y + r * d;
    const float mean = canonical::sum(xr, d) / static_cast<float>(d);
    for (int64_t j = 0; j < d; ++j) centered[j] = xr[j] - mean;
    const float var = canonical::dot(centered.data(), centered.data(), d) / static_cast<float>(d);
    const float inv = 1.0f / std::sqrt(var + eps);
    for (int64_t j = 0; j < d; ++j) {
      const float v = (centered[j] * inv) * weight[j];
      yr[j] = bias != nullptr ? v + bias[j] : v;
    }
  }
}

void silu_mul_scalar(const float* gate, const float* up, int64_t count, float* out) {
  for (int64_t i = 0; i < count; ++i) out[i] = canonical::silu_mul(gate[i], up[i]);
}

void gelu_tanh_scalar(const float* x, int64_t count, float* out) {
  for (int64_t i = 0; i < count; ++i) out[i] = canonical::gelu_tanh(x[i]);
}

void rope_scalar(float* x, int64_t heads, int64_t t, int64_t d, int64_t head_stride, int64_t token_stride,
                 const float* cos, const float* sin) {
  const int64_t half = d / 2;
  for (int64_t h = 0; h < heads; ++h) {
    for (int64_t i = 0; i < t; ++i) {
      float* row = x + h * head_stride + i * token_stride;
      const float* c = cos + i * half;
      const float* s = sin + i * half;
      for (int64_t j = 0; j < half; ++j) {
        const float x1 = row[j], x2 = row[j + half];
        row[j] = x1 * c[j] - x2 * s[j];
        row[j + half] = x2 * c[j] + x1 * s[j];
      }
    }
  }
}

void attention_scalar(const AttentionArgs& a, int64_t begin, int64_t end, float* scores) {
  const int64_t d = a.head_dim;
  const int64_t group = a.n_heads / a.n_kv_heads;
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));
  std::vector<float> acc(static_cast<size_t>(d));
  for (int64_t item = begin; item < end; ++item) {
    const int64_t h = item / a.t, i = item % a.t;
    const int64_t last = a.q_offset + i;  // keys 0..last
    const float* q = a.q + h * a.q_head_stride + i * a.q_token_stride;
    const float* k = a.k + (h / group) * a.kv_head_stride;
    const float* v = a.v + (h / group) * a.kv_head_stride;
    float max = -std::numeric_limits<float>::infinity();
    for (int64_t p = 0; p <= last; ++p) {
      scores[p] = canonical::dot(q, k + p * d, d) * scale;
      max = scores[p] > max ? scores[p] : max;
    }
    float lanes[canonical::kLanes] = {};
    for (int64_t p = 0; p <= last; ++p) {
      scores[p] = canonical::exp(scores[p] - max);
      lanes[p % canonical::kLanes] += scores[p];
    }
    const float denom = canonical::tree16(lanes);
    std::fill(acc.begin(), acc.end(), 0.0f);
    for (int64_t p = 0; p <= last; ++p) {
      const float e = scores[p];
      const float* vp = v + p * d;
      for (int64_t j = 0; j < d; ++j) acc[j] = std::fma(e, vp[j], acc[j]);
    }
    float* out = a.out + i * (a.n_heads * d) + h * d;
    for (int64_t j = 0; j < d; ++j) out[j] = acc[j] / denom;
  }
}

}  // namespace reprox::kernels::internal
