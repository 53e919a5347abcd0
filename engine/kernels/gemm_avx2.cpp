// AVX2 GEMM in the canonical order: a 16-lane partial sum is a pair of ymm
// registers (lanes 0..7 and 8..15); one row times four columns per pass,
// each dot finished with the canonical tree. Weights of any storage type
// are widened to fp32 in registers (f16 with F16C's vcvtph2ps, bf16 by a
// 16-bit shift, q8 by sign extension, conversion and one multiply by the
// block's scale), the same values as canonical::widen_row.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "engine/kernels/internal/avx2_math.hpp"
#include "engine/kernels/internal/paths.hpp"

namespace reprox::kernels::internal {
namespace {

using avx2::head_mask8;
using avx2::tree;

// w'[kk + 8h .. kk + 8h + 8) of a weight row (see weight_loads_avx512.hpp).
// `src` points at the row's element kk (or at a zero-padded copy of the
// tail); q8 reads its scale from the row itself.
template <WeightType T>
inline __m256 load8(const uint8_t* src, const uint8_t* row, int64_t kk, int h) {
  if constexpr (T == WeightType::kF32) {
    return _mm256_loadu_ps(reinterpret_cast<const float*>(src) + 8 * h);
  } else if constexpr (T == WeightType::kF16) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 16 * h)));
  } else if constexpr (T == WeightType::kBF16) {
    const __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 16 * h)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
  } else {
    float s;
    std::memcpy(&s, row + 4 * (kk / kQ8Block), sizeof s);
    const __m256i q = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(src + 8 * h)));
    return _mm256_mul_ps(_mm256_cvtepi32_ps(q), _mm256_set1_ps(s));
  }
}

constexpr int64_t elem_bytes(WeightType t) {
  return t == WeightType::kF32 ? 4 : (t == WeightType::kQ8 ? 1 : 2);
}

constexpr int kCols = 4;

// Where the loads at kk of a weight row stream from (q8: its values sit
// after the row's scales).
template <WeightType T>
inline const uint8_t* stream_at(const uint8_t* row, int64_t kk, int64_t k) {
  return row + (T == WeightType::kQ8 ? 4 * q8_blocks(k) + kk : elem_bytes(T) * kk);
}

// out[c] = dot(x, wc[c]) over k for the kCols weight rows wc. Prefetches (to
// L1) the lines at kk of the npf rows pf, and for q8 their scales too.
template <WeightType T>
inline void tile(const float* x, const uint8_t* const* wc, const uint8_t* const* pf, int npf, int64_t k,
                 float* out) {
  constexpr int64_t eb = elem_bytes(T);
  __m256 lo[kCols], hi[kCols];
  for (int c = 0; c < kCols; ++c) lo[c] = hi[c] = _mm256_setzero_ps();
  int64_t kk = 0;
  for (; kk + 16 <= k; kk += 16) {
    if ((kk * eb) % 64 == 0) {  // once per cache line of the stream
      for (int i = 0; i < npf; ++i) _mm_prefetch(reinterpret_cast<const char*>(stream_at<T>(pf[i], kk, k)), _MM_HINT_T0);
      if (T == WeightType::kQ8 && kk % (16 * kQ8Block) == 0) {  // 16 scales per line
        for (int i = 0; i < npf; ++i) _mm_prefetch(reinterpret_cast<const char*>(pf[i] + 4 * (kk / kQ8Block)), _MM_HINT_T0);
      }
    }
    const __m256 xl = _mm256_loadu_ps(x + kk), xh = _mm256_loadu_ps(x + kk + 8);
    for (int c = 0; c < kCols; ++c) {
      const uint8_t* src = stream_at<T>(wc[c], kk, k);
      lo[c] = _mm256_fmadd_ps(xl, load8<T>(src, wc[c], kk, 0), lo[c]);
      hi[c] = _mm256_fmadd_ps(xh, load8<T>(src, wc[c], kk, 1), hi[c]);
    }
  }
  if (kk < k) {  // the tail's raw bytes copied into a zeroed block: missing lanes are +0
    const __m256i ml = head_mask8(k - kk), mh = head_mask8(k - kk - 8);
    const __m256 xl = _mm256_maskload_ps(x + kk, ml), xh = _mm256_maskload_ps(x + kk + 8, mh);
    for (int c = 0; c < kCols; ++c) {
      alignas(32) uint8_t pad[64] = {};
      std::memcpy(pad, stream_at<T>(wc[c], kk, k), static_cast<size_t>(eb * (k - kk)));
      lo[c] = _mm256_fmadd_ps(xl, load8<T>(pad, wc[c], kk, 0), lo[c]);
      hi[c] = _mm256_fmadd_ps(xh, load8<T>(pad, wc[c], kk, 1), hi[c]);
    }
  }
  for (int c = 0; c < kCols; ++c) out[c] = tree(lo[c], hi[c]);
}

// Column tiles outer, rows inner: a tile's kCols weight rows stay in L1
// across the rows of x, so w streams from memory once whatever m is. The
// first row's pass prefetches the next tile's rows: the hardware prefetcher
// alone keeps too few lines in flight for rows read kCols at a time.
template <WeightType T>
void gemm(const GemmArgs& a, int64_t n_begin, int64_t n_end) {
  for (int64_t c0 = n_begin; c0 < n_end; c0 += kCols) {
    const int64_t cols = std::min<int64_t>(kCols, n_end - c0);
    const uint8_t* wc[kCols];
    const uint8_t* pf[kCols];
    for (int c = 0; c < kCols; ++c) {
      wc[c] = a.w + (c0 + std::min<int64_t>(c, cols - 1)) * a.w_row_bytes;
      pf[c] = a.w + std::min<int64_t>(c0 + kCols + c, a.n - 1) * a.w_row_bytes;
    }
    for (int64_t r = 0; r < a.m; ++r) {
      float out[kCols];
      tile<T>(a.x + r * a.x_stride, wc, pf, r == 0 ? kCols : 0, a.k, out);
      float* y = a.y + r * a.y_stride;
      for (int64_t c = 0; c < cols; ++c) y[c0 + c] = a.bias != nullptr ? out[c] + a.bias[c0 + c] : out[c];
    }
  }
}

}  // namespace

void gemm_avx2(const GemmArgs& a, int64_t n_begin, int64_t n_end) {
  switch (a.wtype) {
    case WeightType::kF16: gemm<WeightType::kF16>(a, n_begin, n_end); break;
    case WeightType::kBF16: gemm<WeightType::kBF16>(a, n_begin, n_end); break;
    case WeightType::kQ8: gemm<WeightType::kQ8>(a, n_begin, n_end); break;
    default: gemm<WeightType::kF32>(a, n_begin, n_end);
  }
}

}  // namespace reprox::kernels::internal
