// Built with -mavx512f -mavx512dq and -ffp-contract=off (see CMakeLists.txt):
// _mm512_mul_pd followed by _mm512_add_pd must stay two roundings, as in
// exp_inline. Uses only the constants of deterministic_math_inl.hpp, never
// its inline functions: an AVX-512 copy of those could be the one the linker
// keeps for the whole program.
#include <immintrin.h>

#include "engine/sampling/internal/deterministic_math_inl.hpp"
#include "engine/sampling/internal/exp_batch.hpp"

namespace reprox::engine::internal {
namespace {

// Eight lanes of exp_inline(x); lanes set in *scalar_lanes need the scalar
// call (result subnormal or near overflow: exp_inline's ldexp branch).
inline __m512d exp8(__m512d x, __mmask8* scalar_lanes) {
  const __mmask8 above_low = _mm512_cmp_pd_mask(x, _mm512_set1_pd(-745.2), _CMP_GT_OQ);  // false for NaN
  const __mmask8 is_nan = _mm512_cmp_pd_mask(x, x, _CMP_UNORD_Q);
  const __mmask8 overflow = _mm512_cmp_pd_mask(x, _mm512_set1_pd(709.78), _CMP_GT_OQ);
  const __m512d shift = _mm512_set1_pd(kRoundShift);
  const __m512d kd = _mm512_sub_pd(_mm512_add_pd(_mm512_mul_pd(x, _mm512_set1_pd(kTableSizeOverLn2)), shift), shift);
  const __m512d r = _mm512_sub_pd(_mm512_sub_pd(x, _mm512_mul_pd(kd, _mm512_set1_pd(kLn2OverTableSizeHi))),
                                  _mm512_mul_pd(kd, _mm512_set1_pd(kLn2OverTableSizeLo)));
  __m512d p = _mm512_set1_pd(1.0 / 120.0);
  p = _mm512_add_pd(_mm512_mul_pd(p, r), _mm512_set1_pd(1.0 / 24.0));
  p = _mm512_add_pd(_mm512_mul_pd(p, r), _mm512_set1_pd(1.0 / 6.0));
  p = _mm512_add_pd(_mm512_mul_pd(p, r), _mm512_set1_pd(0.5));
  p = _mm512_add_pd(_mm512_mul_pd(p, r), _mm512_set1_pd(1.0));
  p = _mm512_add_pd(_mm512_mul_pd(p, r), _mm512_set1_pd(1.0));
  // In-range lanes have |kd| < 2^17; other lanes are replaced below, so their
  // (possibly garbage) integer conversion does not matter.
  const __m512i k = _mm512_cvttpd_epi64(kd);
  const __m512i j = _mm512_and_si512(k, _mm512_set1_epi64(kExpTableSize - 1));
  const __m512i e = _mm512_srai_epi64(_mm512_sub_epi64(k, j), kExpTableBits);  // exact floor(k / 64)
  const __m512d mantissa = _mm512_mul_pd(_mm512_i64gather_pd(j, kExp2Table, 8), p);
  const __mmask8 e_ok = _mm512_cmp_epi64_mask(e, _mm512_set1_epi64(-1022), _MM_CMPINT_NLT) &
                        _mm512_cmp_epi64_mask(e, _mm512_set1_epi64(1023), _MM_CMPINT_LE);
  const __m512d scale = _mm512_castsi512_pd(_mm512_slli_epi64(_mm512_add_epi64(e, _mm512_set1_epi64(1023)), 52));
  __m512d y = _mm512_mul_pd(mantissa, scale);
  const __mmask8 normal = above_low & static_cast<__mmask8>(~overflow);
  *scalar_lanes = normal & static_cast<__mmask8>(~e_ok);
  y = _mm512_mask_blend_pd(normal, _mm512_setzero_pd(), y);            // underflow and -inf: +0
  y = _mm512_mask_blend_pd(overflow, y, _mm512_set1_pd(__builtin_inf()));
  return _mm512_mask_blend_pd(is_nan, y, x);                           // NaN stays NaN
}

}  // namespace

void exp_shifted_avx512(const double* x, int64_t n, double shift, double* out) {
  const __m512d s = _mm512_set1_pd(shift);
  int64_t i = 0;
  for (; i < n; i += 8) {
    const __mmask8 live = n - i >= 8 ? static_cast<__mmask8>(0xFF) : static_cast<__mmask8>((1u << (n - i)) - 1u);
    const __m512d v = _mm512_sub_pd(_mm512_maskz_loadu_pd(live, x + i), s);
    __mmask8 scalar_lanes = 0;
    const __m512d y = exp8(v, &scalar_lanes);
    scalar_lanes &= live;
    if (scalar_lanes != 0) {  // rare: keep x - shift, since out may alias x
      alignas(64) double shifted[8];
      _mm512_store_pd(shifted, v);
      _mm512_mask_storeu_pd(out + i, live, y);
      for (int l = 0; l < 8; ++l) {
        if ((scalar_lanes >> l) & 1u) exp_shifted_scalar(shifted + l, 1, 0.0, out + i + l);  // v - 0.0 == v
      }
    } else {
      _mm512_mask_storeu_pd(out + i, live, y);
    }
  }
}

}  // namespace reprox::engine::internal
