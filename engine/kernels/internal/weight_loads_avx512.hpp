#pragma once
// AVX-512 loads of 16 consecutive weights of one weight row as fp32 values
// w' (kernels.hpp, "weight storage"): the same values as canonical::widen_row.
// Included only by translation units compiled for AVX-512 (F/BW/VL); internal
// linkage throughout.
//
// WeightLoad<T>::full(row, kk, k): w'[kk .. kk+16) of a row of k weights
//   (kk a multiple of 16, kk + 16 <= k).
// WeightLoad<T>::tail(row, kk, k, m): the same for the lanes in m, others +0.
// WeightLoad<T>::at(row, kk, k): the address the loads at kk stream from
//   (for prefetching); kBytes: bytes per weight in that stream.
#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "engine/kernels/kernels.hpp"

namespace reprox::kernels::avx512 {
namespace {

template <WeightType T>
struct WeightLoad;

template <>
struct WeightLoad<WeightType::kF32> {
  static constexpr int64_t kBytes = 4;  // per weight in the stream
  static __m512 full(const uint8_t* row, int64_t kk, int64_t) {
    return _mm512_loadu_ps(reinterpret_cast<const float*>(row) + kk);
  }
  static __m512 tail(const uint8_t* row, int64_t kk, int64_t, __mmask16 m) {
    return _mm512_maskz_loadu_ps(m, reinterpret_cast<const float*>(row) + kk);
  }
  static const uint8_t* at(const uint8_t* row, int64_t kk, int64_t) { return row + 4 * kk; }
};

// vcvtph2ps: exact, NaNs quieted like canonical::widen_f16.
template <>
struct WeightLoad<WeightType::kF16> {
  static constexpr int64_t kBytes = 2;
  static __m512 full(const uint8_t* row, int64_t kk, int64_t) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + 2 * kk)));
  }
  static __m512 tail(const uint8_t* row, int64_t kk, int64_t, __mmask16 m) {
    return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, row + 2 * kk));
  }
  static const uint8_t* at(const uint8_t* row, int64_t kk, int64_t) { return row + 2 * kk; }
};

// Zero-extend to 32 bits and shift left by 16.
template <>
struct WeightLoad<WeightType::kBF16> {
  static constexpr int64_t kBytes = 2;
  static __m512 widen(__m256i h) { return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16)); }
  static __m512 full(const uint8_t* row, int64_t kk, int64_t) {
    return widen(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + 2 * kk)));
  }
  static __m512 tail(const uint8_t* row, int64_t kk, int64_t, __mmask16 m) {
    return widen(_mm256_maskz_loadu_epi16(m, row + 2 * kk));
  }
  static const uint8_t* at(const uint8_t* row, int64_t kk, int64_t) { return row + 2 * kk; }
};

// Sign-extend to 32 bits, convert (exact), multiply by the block's scale
// (one rounding). 16 lanes never straddle a 32-weight block.
template <>
struct WeightLoad<WeightType::kQ8> {
  static constexpr int64_t kBytes = 1;
  static __m512 scale(const uint8_t* row, int64_t kk) {
    float s;
    std::memcpy(&s, row + 4 * (kk / kQ8Block), sizeof s);
    return _mm512_set1_ps(s);
  }
  static __m512 full(const uint8_t* row, int64_t kk, int64_t k) {
    const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(at(row, kk, k)));
    return _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(q)), scale(row, kk));
  }
  static __m512 tail(const uint8_t* row, int64_t kk, int64_t k, __mmask16 m) {
    const __m128i q = _mm_maskz_loadu_epi8(m, at(row, kk, k));
    return _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(q)), scale(row, kk));
  }
  static const uint8_t* at(const uint8_t* row, int64_t kk, int64_t k) { return row + 4 * q8_blocks(k) + kk; }
};

}  // namespace
}  // namespace reprox::kernels::avx512
