#include "engine/sampling/internal/exp_batch.hpp"

#include "engine/sampling/internal/deterministic_math_inl.hpp"
#include "engine/kernels/kernels.hpp"

namespace reprox::engine::internal {

void exp_shifted_scalar(const double* x, int64_t n, double shift, double* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = exp_inline(x[i] - shift);
}

void exp_shifted(const double* x, int64_t n, double shift, double* out) {
  // The kernels' ISA in use (set_isa() never selects one this CPU lacks);
  // AVX-512 there includes the F and DQ that exp_shifted_avx512 uses.
  switch (kernels::active_isa()) {
    case kernels::Isa::kAvx512: exp_shifted_avx512(x, n, shift, out); return;
    case kernels::Isa::kAvx2: exp_shifted_avx2(x, n, shift, out); return;
    default: exp_shifted_scalar(x, n, shift, out); return;
  }
}

}  // namespace reprox::engine::internal
