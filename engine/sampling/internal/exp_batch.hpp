// out[i] = exp_inline(x[i] - shift) for a whole row at once: the sampler's
// softmax over the vocabulary. An AVX-512 path computes eight lanes with the
// same IEEE operations as exp_inline (separate multiply and add, the same
// table, the same power-of-two scaling), so every element has the bits of
// the scalar call; lanes whose result is subnormal take the scalar call.
// The caller sums `out` in index order itself, which keeps that order fixed.
#pragma once

#include <cstdint>

namespace reprox::engine::internal {

void exp_shifted(const double* x, int64_t n, double shift, double* out);  // out may alias x

// The paths behind exp_shifted, for tests. Call exp_shifted_avx512 only when
// cpu_has_avx512() (it is built with AVX-512 enabled throughout).
bool cpu_has_avx512();
void exp_shifted_scalar(const double* x, int64_t n, double shift, double* out);
void exp_shifted_avx512(const double* x, int64_t n, double shift, double* out);

}  // namespace reprox::engine::internal
