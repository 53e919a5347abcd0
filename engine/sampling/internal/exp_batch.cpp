#include "engine/sampling/internal/exp_batch.hpp"

#include "engine/sampling/internal/deterministic_math_inl.hpp"

namespace reprox::engine::internal {

void exp_shifted_scalar(const double* x, int64_t n, double shift, double* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = exp_inline(x[i] - shift);
}

// Built with the baseline flags, so that the check itself runs on any x86-64.
bool cpu_has_avx512() {
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
  }();
  return has;
}

void exp_shifted(const double* x, int64_t n, double shift, double* out) {
  if (cpu_has_avx512()) {
    exp_shifted_avx512(x, n, shift, out);
  } else {
    exp_shifted_scalar(x, n, shift, out);
  }
}

}  // namespace reprox::engine::internal
