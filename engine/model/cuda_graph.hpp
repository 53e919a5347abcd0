#pragma once
// A CUDA graph of one fast decode step, behind a torch-CUDA-free header.
// Built only where libtorch has CUDA and REPROX_CUDA_GRAPHS is on
// (REPROX_WITH_CUDA); elsewhere available() is false and the rest throws.
//
// capture() first runs `body` once eagerly on a side stream (libtorch and
// cuBLAS set themselves up; the caller makes that run harmless), then
// records it; replay() runs the recording on the current stream. The
// tensors `body` reads must stay at their addresses; its result is the
// graph's output, rewritten by every replay. When recording fails,
// capture() ends the capture (the stream and libtorch's allocator leave
// capture mode, CUDA's last error is cleared) and throws; the object is then
// not to be replayed.
#include <functional>
#include <memory>

#include <torch/types.h>

namespace reprox::engine {

class CudaGraph {
 public:
  static bool available();
  CudaGraph();
  ~CudaGraph();
  torch::Tensor capture(const std::function<torch::Tensor()>& body);
  void replay();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace reprox::engine
