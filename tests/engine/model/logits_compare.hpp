#pragma once
// Comparing fp32 logits tensors (CPU) in the model tests.
#include <cstring>

#include <torch/types.h>

namespace reprox::testutil {

// Largest |a - b| over two tensors of one shape; 0 when equal in value.
inline double max_abs_diff(const torch::Tensor& a, const torch::Tensor& b) {
  return (a - b).abs().max().item<double>();
}

// Same shape and the same bytes (memcmp): what strict mode promises.
inline bool bitwise_equal(const torch::Tensor& a, const torch::Tensor& b) {
  const torch::Tensor ac = a.contiguous(), bc = b.contiguous();
  return ac.sizes() == bc.sizes() && std::memcmp(ac.data_ptr<float>(), bc.data_ptr<float>(), ac.nbytes()) == 0;
}

}  // namespace reprox::testutil
