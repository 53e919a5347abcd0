// Built with -mavx2 (no -mfma) and -ffp-contract=off (see CMakeLists.txt):
// _mm256_mul_pd followed by _mm256_add_pd must stay two roundings, as in
// exp_inline. Uses only the constants of deterministic_math_inl.hpp, never
// its inline functions: an AVX2 copy of those could be the one the linker
// keeps for the whole program.
//
// AVX2 has no 64-bit integer conversion or arithmetic shift, so the table
// index and the exponent are computed in 32-bit lanes: in-range lanes have
// |kd| < 2^17, and the other lanes are replaced by the blends at the end.
#include <immintrin.h>

#include "engine/sampling/internal/deterministic_math_inl.hpp"
#include "engine/sampling/internal/exp_batch.hpp"

namespace reprox::engine::internal {
namespace {

// Four 64-bit lanes, all ones where the 32-bit lane of `m` is all ones.
inline __m256d widen_mask(__m128i m) { return _mm256_castsi256_pd(_mm256_cvtepi32_epi64(m)); }

// Four lanes of exp_inline(x); sets *scalar_lanes to the lanes (a 4-bit
// mask) that need the scalar call (result subnormal or near overflow: exp_inline's ldexp branch).
inline __m256d exp4(__m256d x, int* scalar_lanes) {
  const __m256d above_low = _mm256_cmp_pd(x, _mm256_set1_pd(-745.2), _CMP_GT_OQ);  // false for NaN
  const __m256d is_nan = _mm256_cmp_pd(x, x, _CMP_UNORD_Q);
  const __m256d overflow = _mm256_cmp_pd(x, _mm256_set1_pd(709.78), _CMP_GT_OQ);
  const __m256d shift = _mm256_set1_pd(kRoundShift);
  const __m256d kd = _mm256_sub_pd(_mm256_add_pd(_mm256_mul_pd(x, _mm256_set1_pd(kTableSizeOverLn2)), shift), shift);
  const __m256d r = _mm256_sub_pd(_mm256_sub_pd(x, _mm256_mul_pd(kd, _mm256_set1_pd(kLn2OverTableSizeHi))),
                                  _mm256_mul_pd(kd, _mm256_set1_pd(kLn2OverTableSizeLo)));
  __m256d p = _mm256_set1_pd(1.0 / 120.0);
  p = _mm256_add_pd(_mm256_mul_pd(p, r), _mm256_set1_pd(1.0 / 24.0));
  p = _mm256_add_pd(_mm256_mul_pd(p, r), _mm256_set1_pd(1.0 / 6.0));
  p = _mm256_add_pd(_mm256_mul_pd(p, r), _mm256_set1_pd(0.5));
  p = _mm256_add_pd(_mm256_mul_pd(p, r), _mm256_set1_pd(1.0));
  p = _mm256_add_pd(_mm256_mul_pd(p, r), _mm256_set1_pd(1.0));
  const __m128i k = _mm256_cvttpd_epi32(kd);  // exact for in-range lanes
  const __m128i j = _mm_and_si128(k, _mm_set1_epi32(kExpTableSize - 1));
  const __m128i e = _mm_srai_epi32(_mm_sub_epi32(k, j), kExpTableBits);  // exact floor(k / 64)
  const __m256d mantissa = _mm256_mul_pd(_mm256_i32gather_pd(kExp2Table, j, 8), p);
  const __m128i e_out_of_range = _mm_or_si128(_mm_cmplt_epi32(e, _mm_set1_epi32(-1022)),
                                              _mm_cmpgt_epi32(e, _mm_set1_epi32(1023)));
  const __m256i biased = _mm256_cvtepi32_epi64(_mm_add_epi32(e, _mm_set1_epi32(1023)));
  const __m256d scale = _mm256_castsi256_pd(_mm256_slli_epi64(biased, 52));
  __m256d y = _mm256_mul_pd(mantissa, scale);
  const __m256d normal = _mm256_andnot_pd(overflow, above_low);
  *scalar_lanes = _mm256_movemask_pd(_mm256_and_pd(widen_mask(e_out_of_range), normal));
  y = _mm256_and_pd(normal, y);                                      // underflow and -inf: +0
  y = _mm256_blendv_pd(y, _mm256_set1_pd(__builtin_inf()), overflow);
  return _mm256_blendv_pd(y, x, is_nan);                             // NaN stays NaN
}

}  // namespace

void exp_shifted_avx2(const double* x, int64_t n, double shift, double* out) {
  const __m256d s = _mm256_set1_pd(shift);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const __m256d v = _mm256_sub_pd(_mm256_loadu_pd(x + i), s);
    int scalar_lanes = 0;
    const __m256d y = exp4(v, &scalar_lanes);
    if (scalar_lanes != 0) {  // rare: keep x - shift, since out may alias x
      alignas(32) double shifted[4];
      _mm256_store_pd(shifted, v);
      _mm256_storeu_pd(out + i, y);
      for (int l = 0; l < 4; ++l) {
        if ((scalar_lanes >> l) & 1) exp_shifted_scalar(shifted + l, 1, 0.0, out + i + l);  // v - 0.0 == v
      }
    } else {
      _mm256_storeu_pd(out + i, y);
    }
  }
  if (i < n) exp_shifted_scalar(x + i, n - i, shift, out + i);
}

}  // namespace reprox::engine::internal
