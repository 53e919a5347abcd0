#include "engine/model/cuda_graph.hpp"

#include <stdexcept>

#include <torch/cuda.h>
#include <torch/types.h>

#ifdef REPROX_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime_api.h>
#endif

namespace reprox::engine {

#ifdef REPROX_WITH_CUDA

struct CudaGraph::Impl {
  at::cuda::CUDAGraph graph;
};

bool CudaGraph::available() { return true; }
CudaGraph::CudaGraph() : impl_(std::make_unique<Impl>()) {}
CudaGraph::~CudaGraph() = default;

torch::Tensor CudaGraph::capture(const std::function<torch::Tensor()>& body) {
  torch::cuda::synchronize();
  torch::Tensor out;
  {
    c10::cuda::CUDAStreamGuard side(at::cuda::getStreamFromPool());
    body();  // warm-up, eager
    torch::cuda::synchronize();
    impl_->graph.capture_begin();
    try {
      out = body();
    } catch (...) {
      // Leave capture mode (the stream's and the allocator's) before the
      // error goes on; ending a broken capture throws too.
      try {
        impl_->graph.capture_end();
      } catch (...) {
      }
      (void)cudaGetLastError();  // or the next launch check reports it
      throw;
    }
    try {
      impl_->graph.capture_end();  // throws when the capture was invalidated
    } catch (...) {
      (void)cudaGetLastError();
      throw;
    }
  }
  torch::cuda::synchronize();
  return out;
}

void CudaGraph::replay() { impl_->graph.replay(); }

#else

struct CudaGraph::Impl {};

bool CudaGraph::available() { return false; }
CudaGraph::CudaGraph() = default;
CudaGraph::~CudaGraph() = default;
torch::Tensor CudaGraph::capture(const std::function<torch::Tensor()>&) {
  throw std::runtime_error("this build has no CUDA graphs");
}
void CudaGraph::replay() { throw std::runtime_error("this build has no CUDA graphs"); }

#endif

}  // namespace reprox::engine
