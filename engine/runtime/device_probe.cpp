#include "engine/runtime/device_probe.hpp"

#include <chrono>
#include <stdexcept>

#include <torch/cuda.h>
#include <torch/types.h>

namespace reprox::engine {

double device_copy_bandwidth(const std::string& device, size_t bytes, int reps) {
  const torch::Device dev(device);
  if (dev.is_cuda() && !torch::cuda::is_available()) {
    throw std::runtime_error("device '" + device + "' requested but CUDA is not available");
  }
  const auto sync = [&dev] {
    if (dev.is_cuda()) torch::cuda::synchronize(dev.has_index() ? dev.index() : -1);
  };
  c10::InferenceMode guard;
  const auto options = torch::TensorOptions().dtype(torch::kUInt8).device(dev);
  torch::Tensor src = torch::ones({static_cast<int64_t>(bytes)}, options);
  torch::Tensor dst = torch::empty({static_cast<int64_t>(bytes)}, options);
  dst.copy_(src);  // warm-up: pages touched, kernels loaded
  sync();
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < reps; ++i) dst.copy_(src);
  sync();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return 2.0 * static_cast<double>(bytes) * reps / seconds;
}

}  // namespace reprox::engine
