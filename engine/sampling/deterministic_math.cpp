#include "engine/sampling/deterministic_math.hpp"

#include "engine/sampling/internal/deterministic_math_inl.hpp"

namespace reprox::engine {

double det_exp(double x) { return internal::exp_inline(x); }
double det_log(double x) { return internal::log_inline(x); }

}  // namespace reprox::engine
