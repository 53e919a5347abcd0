// AVX-512 norms, activations and RoPE. Tails use masked loads/stores so the
// last partial vector runs the same instructions as the full ones.
#include <cmath>

#include "engine/kernels/internal/avx512_math.hpp"
#include "engine/kernels/internal/paths.hpp"

namespace reprox::kernels::internal {
namespace {

using avx512::head_mask;

inline __m512 negate(__m512 v) { return _mm512_xor_ps(v, _mm512_set1_ps(-0.0f)); }

}  // namespace

void rms_norm_avx512(const float* x, int64_t rows, int64_t d, const float* weight, float eps, float* y) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * d;
    float* yr = y + r * d;
    const float mean_sq = avx512::dot(xr, xr, d) / static_cast<float>(d);
    const __m512 inv = _mm512_set1_ps(1.0f / std::sqrt(mean_sq + eps));
    for (int64_t j = 0; j < d; j += 16) {
      const __mmask16 m = head_mask(d - j);
      const __m512 v = _mm512_mul_ps(_mm512_mul_ps(_mm512_maskz_loadu_ps(m, xr + j), inv),
                                     _mm512_maskz_loadu_ps(m, weight + j));
      _mm512_mask_storeu_ps(yr + j, m, v);
    }
  }
}

void layer_norm_avx512(const float* x, int64_t rows, int64_t d, const float* weight, const float* bias, float eps,
                       float* y) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * d;
    float* yr = y + r * d;  // holds x - mean first (fine when y aliases x)
    const __m512 mean = _mm512_set1_ps(avx512::sum(xr, d) / static_cast<float>(d));
    for (int64_t j = 0; j < d; j += 16) {
      const __mmask16 m = head_mask(d - j);
      _mm512_mask_storeu_ps(yr + j, m, _mm512_sub_ps(_mm512_maskz_loadu_ps(m, xr + j), mean));
    }
    const float var = avx512::dot(yr, yr, d) / static_cast<float>(d);
    const __m512 inv = _mm512_set1_ps(1.0f / std::sqrt(var + eps));
    for (int64_t j = 0; j < d; j += 16) {
      const __mmask16 m = head_mask(d - j);
      __m512 v = _mm512_mul_ps(_mm512_mul_ps(_mm512_maskz_loadu_ps(m, yr + j), inv),
                               _mm512_maskz_loadu_ps(m, weight + j));
      if (bias != nullptr) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m, bias + j));
      _mm512_mask_storeu_ps(yr + j, m, v);
    }
  }
}

void silu_mul_avx512(const float* gate, const float* up, int64_t count, float* out) {
  const __m512 one = _mm512_set1_ps(1.0f);
  for (int64_t i = 0; i < count; i += 16) {
    const __mmask16 m = head_mask(count - i);
    const __m512 g = _mm512_maskz_loadu_ps(m, gate + i);
    const __m512 silu = _mm512_div_ps(g, _mm512_add_ps(one, avx512::exp(negate(g))));
    _mm512_mask_storeu_ps(out + i, m, _mm512_mul_ps(silu, _mm512_maskz_loadu_ps(m, up + i)));
  }
}

void gelu_tanh_avx512(const float* x, int64_t count, float* out) {
  const __m512 one = _mm512_set1_ps(1.0f);
  const __m512 k0 = _mm512_set1_ps(0.7978845608028654f), k1 = _mm512_set1_ps(0.044715f);
  const __m512 minus_two = _mm512_set1_ps(-2.0f);
  for (int64_t i = 0; i < count; i += 16) {
    const __mmask16 m = head_mask(count - i);
    const __m512 v = _mm512_maskz_loadu_ps(m, x + i);
    const __m512 v3 = _mm512_mul_ps(_mm512_mul_ps(v, v), v);
    const __m512 u = _mm512_mul_ps(k0, _mm512_add_ps(v, _mm512_mul_ps(k1, v3)));
    const __m512 res = _mm512_div_ps(v, _mm512_add_ps(one, avx512::exp(_mm512_mul_ps(minus_two, u))));
    _mm512_mask_storeu_ps(out + i, m, res);
  }
}

void rope_avx512(float* x, int64_t heads, int64_t t, int64_t d, int64_t head_stride, int64_t token_stride,
                 const float* cos, const float* sin) {
  const int64_t half = d / 2;
  for (int64_t h = 0; h < heads; ++h) {
    for (int64_t i = 0; i < t; ++i) {
      float* row = x + h * head_stride + i * token_stride;
      const float* cr = cos + i * half;
      const float* sr = sin + i * half;
      for (int64_t j = 0; j < half; j += 16) {
        const __mmask16 m = head_mask(half - j);
        const __m512 x1 = _mm512_maskz_loadu_ps(m, row + j), x2 = _mm512_maskz_loadu_ps(m, row + j + half);
        const __m512 c = _mm512_maskz_loadu_ps(m, cr + j), s = _mm512_maskz_loadu_ps(m, sr + j);
        _mm512_mask_storeu_ps(row + j, m, _mm512_sub_ps(_mm512_mul_ps(x1, c), _mm512_mul_ps(x2, s)));
        _mm512_mask_storeu_ps(row + j + half, m, _mm512_add_ps(_mm512_mul_ps(x2, c), _mm512_mul_ps(x1, s)));
      }
    }
  }
}

}  // namespace reprox::kernels::internal
