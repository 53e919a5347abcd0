#include "engine/model/step_output.hpp"

#include <limits>

namespace reprox::engine {

torch::Tensor logits_to_host(const torch::Tensor& logits) {
  if (!logits.is_cuda()) return logits.to(torch::kFloat32).contiguous();
  torch::Tensor host = torch::empty(logits.sizes(), logits.options().device(torch::kCPU).pinned_memory(true));
  host.copy_(logits);
  return host.to(torch::kFloat32).contiguous();
}

torch::Tensor finite_argmax(const torch::Tensor& logits) {
  constexpr double kImpossible = -std::numeric_limits<double>::infinity();
  const torch::Tensor finite = torch::nan_to_num(logits, kImpossible, kImpossible, kImpossible);
  // max along a dimension returns the first index of the largest value
  // (documented for torch.max and torch.argmax, CPU and CUDA).
  const auto [largest, index] = finite.max(1);
  return torch::where(largest.isneginf(), torch::full_like(index, -1), index);
}

}  // namespace reprox::engine
