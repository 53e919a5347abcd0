// What leaves the model's device after a step: float32 logits for the host's
// sampler, or, for rows whose draw is the argmax, only that token id.
//
// Both are exact. The widening to float32 is exact, so it may run on the
// host after a copy in the compute dtype. The argmax is comparisons only, so
// the device picks the id the host's sampler would pick from the same
// logits: the lowest id among the largest, where NaN and +/-inf count as
// impossible (sampler.hpp, steps 1 and 4).
#pragma once

#include <torch/types.h>

namespace reprox::engine {

// logits [rows, V] in any floating dtype, on any device -> float32 [rows, V]
// on the CPU, contiguous. Off a GPU the copy moves the compute dtype's bytes
// (half of float32's for bf16 and fp16) into page-locked memory (libtorch's
// caching host allocator, so not allocated per step).
torch::Tensor logits_to_host(const torch::Tensor& logits);

// logits [rows, V] in any floating dtype, on any device -> int64 [rows] on
// the same device: per row the lowest index of the largest finite value, or
// -1 where no value is finite.
torch::Tensor finite_argmax(const torch::Tensor& logits);

}  // namespace reprox::engine
