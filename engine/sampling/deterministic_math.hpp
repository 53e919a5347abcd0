// exp and log as fixed sequences of IEEE-754 double operations (no libm
// dispatch, no FMA contraction), so they return the same bits on every
// machine. Accuracy: about 1 ulp over the whole range. The sampler uses them
// for every softmax; they are exported for tests and other reproducible code.
#pragma once

namespace reprox::engine {

double det_exp(double x);  // 0 below -745.2, +inf above 709.78, NaN for NaN
double det_log(double x);  // NaN for x < 0 or NaN, -inf for 0, +inf for +inf

}  // namespace reprox::engine
