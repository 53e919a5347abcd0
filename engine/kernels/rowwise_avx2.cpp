// AVX2 norms, activations and RoPE, eight lanes at a time. The tail uses
// masked loads and stores and runs the same lane-wise arithmetic as the full
// vectors, so the bits are the scalar path's.
#include <cmath>

#include "engine/kernels/internal/avx2_math.hpp"
#include "engine/kernels/internal/paths.hpp"

namespace reprox::kernels::internal {
namespace {

using avx2::head_mask8;

inline __m256 negate(__m256 v) { return _mm256_xor_ps(v, _mm256_set1_ps(-0.0f)); }

// Lanes [i, i + 8) of a row, or the first `live` of them (the tail).
struct Lanes {
  int64_t i;
  bool full;
  __m256i mask;
  __m256 load(const float* p) const { return avx2::load8(p + i, mask, full); }
  void store(float* p, __m256 v) const { avx2::store8(p + i, mask, full, v); }
};

// op(lanes) for [0, count), eight at a time.
template <class Op>
inline void for_each8(int64_t count, Op op) {
  int64_t i = 0;
  for (; i + 8 <= count; i += 8) op(Lanes{i, true, _mm256_setzero_si256()});
  if (i < count) op(Lanes{i, false, head_mask8(count - i)});
}

}  // namespace

void rms_norm_avx2(const float* x, int64_t rows, int64_t d, const float* weight, float eps, float* y) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * d;
    float* yr = y + r * d;
    const float mean_sq = avx2::dot(xr, xr, d) / static_cast<float>(d);
    const __m256 inv = _mm256_set1_ps(1.0f / std::sqrt(mean_sq + eps));
    for_each8(d, [&](const Lanes& l) {
      const __m256 v = _mm256_mul_ps(_mm256_mul_ps(l.load(xr), inv), l.load(weight));
      l.store(yr, v);
    });
  }
}

void layer_norm_avx2(const float* x, int64_t rows, int64_t d, const float* weight, const float* bias, float eps,
                     float* y) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * d;
    float* yr = y + r * d;  // holds x - mean first (fine when y aliases x)
    const __m256 mean = _mm256_set1_ps(avx2::sum(xr, d) / static_cast<float>(d));
    for_each8(d, [&](const Lanes& l) {
      l.store(yr, _mm256_sub_ps(l.load(xr), mean));
    });
    const float var = avx2::dot(yr, yr, d) / static_cast<float>(d);
    const __m256 inv = _mm256_set1_ps(1.0f / std::sqrt(var + eps));
    for_each8(d, [&](const Lanes& l) {
      __m256 v = _mm256_mul_ps(_mm256_mul_ps(l.load(yr), inv), l.load(weight));
      if (bias != nullptr) v = _mm256_add_ps(v, l.load(bias));
      l.store(yr, v);
    });
  }
}

void silu_mul_avx2(const float* gate, const float* up, int64_t count, float* out) {
  const __m256 one = _mm256_set1_ps(1.0f);
  for_each8(count, [&](const Lanes& l) {
    const __m256 g = l.load(gate);
    const __m256 silu = _mm256_div_ps(g, _mm256_add_ps(one, avx2::exp(negate(g))));
    l.store(out, _mm256_mul_ps(silu, l.load(up)));
  });
}

void gelu_tanh_avx2(const float* x, int64_t count, float* out) {
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 k0 = _mm256_set1_ps(0.7978845608028654f), k1 = _mm256_set1_ps(0.044715f);
  const __m256 minus_two = _mm256_set1_ps(-2.0f);
  for_each8(count, [&](const Lanes& l) {
    const __m256 v = l.load(x);
    const __m256 v3 = _mm256_mul_ps(_mm256_mul_ps(v, v), v);
    const __m256 u = _mm256_mul_ps(k0, _mm256_add_ps(v, _mm256_mul_ps(k1, v3)));
    l.store(out, _mm256_div_ps(v, _mm256_add_ps(one, avx2::exp(_mm256_mul_ps(minus_two, u)))));
  });
}

void rope_avx2(float* x, int64_t heads, int64_t t, int64_t d, int64_t head_stride, int64_t token_stride,
               const float* cos, const float* sin) {
  const int64_t half = d / 2;
  for (int64_t h = 0; h < heads; ++h) {
    for (int64_t i = 0; i < t; ++i) {
      float* row = x + h * head_stride + i * token_stride;
      const float* cr = cos + i * half;
      const float* sr = sin + i * half;
      for_each8(half, [&](const Lanes& l) {
        const __m256 x1 = l.load(row), x2 = l.load(row + half);
        const __m256 c = l.load(cr), s = l.load(sr);
        l.store(row, _mm256_sub_ps(_mm256_mul_ps(x1, c), _mm256_mul_ps(x2, s)));
        l.store(row + half, _mm256_add_ps(_mm256_mul_ps(x2, c), _mm256_mul_ps(x1, s)));
      });
    }
  }
}

}  // namespace reprox::kernels::internal
