#pragma once
// Reads named tensors out of a model's memory-mapped safetensors shards into
// torch tensors, checking shape and dtype, and converts weight matrices to
// their storage type (model_weights.hpp). Errors name the shard file and the
// tensor. Reports load progress on stderr for large models.
#include <optional>
#include <string>
#include <vector>

#include <torch/types.h>

#include "engine/kernels/kernels.hpp"
#include "engine/model/weight_set.hpp"

namespace reprox::engine {

class TensorReader {
 public:
  // matrix_type: the storage of matrices, or nullopt for the compute dtype
  // of `options` (fast mode).
  TensorReader(const std::string& dir, const WeightSet& weights, torch::TensorOptions options, bool progress,
               std::optional<kernels::WeightType> matrix_type);

  bool has(const std::string& name) const { return weights_.find(name) != nullptr; }

  // A small tensor (norm, bias, positions) in the compute dtype and device.
  torch::Tensor read(const std::string& name, const std::vector<int64_t>& expected);
  torch::Tensor read_optional(const std::string& name, const std::vector<int64_t>& expected, bool wanted) {
    return wanted ? read(name, expected) : torch::Tensor();
  }
  // The tensor in its checkpoint dtype on the CPU (one copy of the bytes).
  torch::Tensor read_raw(const std::string& name, const std::vector<int64_t>& expected);
  // A weight matrix [out, in] in its storage type: to_storage(read_raw(...)).
  torch::Tensor read_matrix(const std::string& name, const std::vector<int64_t>& expected) {
    return to_storage(read_raw(name, expected));
  }
  // w [out, in] (any float dtype, CPU) converted to the matrix storage. The
  // strict storage types keep their rows kernels::padded_row_bytes() apart,
  // so the result's rows may not be back to back (stride(0) says; stride(1)
  // is 1).
  torch::Tensor to_storage(const torch::Tensor& w) const;

 private:
  const TensorView& checked(const std::string& name, const std::vector<int64_t>& expected) const;
  void report(size_t bytes);

  std::string dir_;
  const WeightSet& weights_;
  torch::TensorOptions options_;
  std::optional<kernels::WeightType> matrix_type_;
  size_t total_;
  bool progress_;
  size_t loaded_ = 0;
  int last_decile_ = 0;
};

}  // namespace reprox::engine
