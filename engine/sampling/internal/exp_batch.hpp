// out[i] = exp_inline(x[i] - shift) for a whole row at once: the sampler's
// softmax over the vocabulary. The AVX-512 and AVX2 paths compute eight or
// four lanes with the same IEEE operations as exp_inline (separate multiply
// and add, the same table, the same power-of-two scaling), so every element
// has the bits of the scalar call; lanes whose result is subnormal take the
// scalar call.
// The caller sums `out` in index order itself, which keeps that order fixed.
#pragma once

#include <cstdint>

namespace reprox::engine::internal {

void exp_shifted(const double* x, int64_t n, double shift, double* out);  // out may alias x

// Calls fn(begin, weights, count) for consecutive blocks of the weights
// exp_inline(x[i] - shift), i in [begin, begin + count), in index order, so
// that a caller can sum or sort them without an n-long buffer.
template <typename Fn>
void for_each_exp_block(const double* x, int32_t n, double shift, Fn&& fn) {
  constexpr int32_t kBlock = 512;
  double block[kBlock];
  for (int32_t begin = 0; begin < n; begin += kBlock) {
    const int32_t count = n - begin < kBlock ? n - begin : kBlock;
    exp_shifted(x + begin, count, shift, block);
    fn(begin, static_cast<const double*>(block), count);
  }
}

// The paths behind exp_shifted, for tests. Call exp_shifted_avx512 only when
// kernels::best_isa() is AVX-512, exp_shifted_avx2 only when it is AVX2 or
// AVX-512 (each is built with its ISA enabled throughout).
void exp_shifted_scalar(const double* x, int64_t n, double shift, double* out);
void exp_shifted_avx2(const double* x, int64_t n, double shift, double* out);
void exp_shifted_avx512(const double* x, int64_t n, double shift, double* out);

}  // namespace reprox::engine::internal
