// Inline bodies of det_exp / det_log (see ../deterministic_math.hpp). Include
// only from translation units built with reprox_sampling's flags
// (-ffp-contract=off), so that every machine runs the same operation sequence.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace reprox::engine::internal {

// fdlibm's split of ln 2: kLn2Hi has only 32 significant bits, so products
// with integers below 2^21 are exact.
constexpr double kLn2Hi = 6.93147180369123816490e-01;
constexpr double kLn2Lo = 1.90821492927058770002e-10;
constexpr double kRoundShift = 0x1.8p52;  // adding then subtracting rounds to an integer

// exp: x = (64 e + j) ln2/64 + r, e^x = 2^e * 2^(j/64) * e^r, |r| <= ln2/128.
constexpr int kExpTableBits = 6;
constexpr int kExpTableSize = 1 << kExpTableBits;
constexpr double kTableSizeOverLn2 = 0x1.71547652b82fep+6;  // 64 / ln 2
constexpr double kLn2OverTableSizeHi = kLn2Hi / kExpTableSize;  // exact (power-of-two divisor)
constexpr double kLn2OverTableSizeLo = kLn2Lo / kExpTableSize;

// 2^(j/64), each correctly rounded (computed offline to 60 digits).
constexpr double kExp2Table[kExpTableSize] = {
    0x1.0000000000000p+0, 0x1.02c9a3e778061p+0,
    0x1.059b0d3158574p+0, 0x1.0874518759bc8p+0,
    0x1.0b5586cf9890fp+0, 0x1.0e3ec32d3d1a2p+0,
    0x1.11301d0125b51p+0, 0x1.1429aaea92de0p+0,
    0x1.172b83c7d517bp+0, 0x1.1a35beb6fcb75p+0,
    0x1.1d4873168b9aap+0, 0x1.2063b88628cd6p+0,
    0x1.2387a6e756238p+0, 0x1.26b4565e27cddp+0,
    0x1.29e9df51fdee1p+0, 0x1.2d285a6e4030bp+0,
    0x1.306fe0a31b715p+0, 0x1.33c08b26416ffp+0,
    0x1.371a7373aa9cbp+0, 0x1.3a7db34e59ff7p+0,
    0x1.3dea64c123422p+0, 0x1.4160a21f72e2ap+0,
    0x1.44e086061892dp+0, 0x1.486a2b5c13cd0p+0,
    0x1.4bfdad5362a27p+0, 0x1.4f9b2769d2ca7p+0,
    0x1.5342b569d4f82p+0, 0x1.56f4736b527dap+0,
    0x1.5ab07dd485429p+0, 0x1.5e76f15ad2148p+0,
    0x1.6247eb03a5585p+0, 0x1.6623882552225p+0,
    0x1.6a09e667f3bcdp+0, 0x1.6dfb23c651a2fp+0,
    0x1.71f75e8ec5f74p+0, 0x1.75feb564267c9p+0,
    0x1.7a11473eb0187p+0, 0x1.7e2f336cf4e62p+0,
    0x1.82589994cce13p+0, 0x1.868d99b4492edp+0,
    0x1.8ace5422aa0dbp+0, 0x1.8f1ae99157736p+0,
    0x1.93737b0cdc5e5p+0, 0x1.97d829fde4e50p+0,
    0x1.9c49182a3f090p+0, 0x1.a0c667b5de565p+0,
    0x1.a5503b23e255dp+0, 0x1.a9e6b5579fdbfp+0,
    0x1.ae89f995ad3adp+0, 0x1.b33a2b84f15fbp+0,
    0x1.b7f76f2fb5e47p+0, 0x1.bcc1e904bc1d2p+0,
    0x1.c199bdd85529cp+0, 0x1.c67f12e57d14bp+0,
    0x1.cb720dcef9069p+0, 0x1.d072d4a07897cp+0,
    0x1.d5818dcfba487p+0, 0x1.da9e603db3285p+0,
    0x1.dfc97337b9b5fp+0, 0x1.e502ee78b3ff6p+0,
    0x1.ea4afa2a490dap+0, 0x1.efa1bee615a27p+0,
    0x1.f50765b6e4540p+0, 0x1.fa7c1819e90d8p+0,
};

inline double power_of_two(int k) {  // 2^k for -1022 <= k <= 1023
  const uint64_t bits = static_cast<uint64_t>(k + 1023) << 52;
  double value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

inline double exp_inline(double x) {
  if (!(x > -745.2)) return x != x ? x : 0.0;  // NaN stays NaN; underflow (and -inf) gives 0
  if (x > 709.78) return std::numeric_limits<double>::infinity();
  const double kd = (x * kTableSizeOverLn2 + kRoundShift) - kRoundShift;  // nearest integer
  const int k = static_cast<int>(kd);
  const double r = (x - kd * kLn2OverTableSizeHi) - kd * kLn2OverTableSizeLo;  // |r| <= 0.00542
  // Taylor series of e^r to degree 5 (truncation error < 4e-17 relative).
  double p = 1.0 / 120.0;
  p = p * r + 1.0 / 24.0;
  p = p * r + 1.0 / 6.0;
  p = p * r + 0.5;
  p = p * r + 1.0;
  p = p * r + 1.0;
  const int j = k & (kExpTableSize - 1);
  const int e = (k - j) / kExpTableSize;  // exact: floor(k / 64)
  const double mantissa = kExp2Table[j] * p;
  if (e >= -1022 && e <= 1023) return mantissa * power_of_two(e);
  return std::ldexp(mantissa, e);  // subnormal or near-overflow result
}

inline double log_inline(double x) {
  if (x != x || x < 0.0) return std::numeric_limits<double>::quiet_NaN();
  if (x == 0.0) return -std::numeric_limits<double>::infinity();
  if (x == std::numeric_limits<double>::infinity()) return x;
  int exponent = 0;
  double f = std::frexp(x, &exponent);  // x = f * 2^exponent, f in [0.5, 1)
  if (f < 0.70710678118654752440) {
    f *= 2.0;
    exponent -= 1;
  }  // f in [sqrt(1/2), sqrt(2))
  const double s = (f - 1.0) / (f + 1.0);  // |s| <= 0.1716
  const double s2 = s * s;
  // log f = 2 atanh(s) = 2s (1 + s^2/3 + s^4/5 + ... + s^24/25)
  double p = 1.0 / 25.0;
  p = p * s2 + 1.0 / 23.0;
  p = p * s2 + 1.0 / 21.0;
  p = p * s2 + 1.0 / 19.0;
  p = p * s2 + 1.0 / 17.0;
  p = p * s2 + 1.0 / 15.0;
  p = p * s2 + 1.0 / 13.0;
  p = p * s2 + 1.0 / 11.0;
  p = p * s2 + 1.0 / 9.0;
  p = p * s2 + 1.0 / 7.0;
  p = p * s2 + 1.0 / 5.0;
  p = p * s2 + 1.0 / 3.0;
  p = p * s2 + 1.0;
  const double e = static_cast<double>(exponent);
  return e * kLn2Hi + (2.0 * s * p + e * kLn2Lo);
}

}  // namespace reprox::engine::internal
