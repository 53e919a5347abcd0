#include "engine/model/tensor_reader.hpp"

#include <cstring>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include <torch/types.h>

namespace reprox::engine {
namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::ostringstream out;
  out << '[';
  for (size_t i = 0; i < shape.size(); ++i) out << (i ? ", " : "") << shape[i];
  out << ']';
  return out.str();
}

torch::ScalarType torch_dtype(DType dtype) {
  switch (dtype) {
    case DType::F16: return torch::kFloat16;
    case DType::BF16: return torch::kBFloat16;
    default: return torch::kFloat32;
  }
}

// m [N, row] (row: the storage row, in elements) in rows
// kernels::padded_row_bytes(type, k) apart: a [N, row] view of a wider
// tensor when that distance is longer, else m itself.
torch::Tensor with_padded_rows(const torch::Tensor& m, kernels::WeightType type, int64_t k) {
  const int64_t stride = kernels::padded_row_bytes(type, k) / m.element_size();
  if (stride == m.size(1)) return m.contiguous();
  torch::Tensor wide = torch::empty({m.size(0), stride}, m.options());
  wide.narrow(1, m.size(1), stride - m.size(1)).zero_();
  return wide.narrow(1, 0, m.size(1)).copy_(m);
}

}  // namespace

TensorReader::TensorReader(const std::string& dir, const WeightSet& weights, torch::TensorOptions options,
                           bool progress, std::optional<kernels::WeightType> matrix_type)
    : dir_(dir), weights_(weights), options_(options), matrix_type_(matrix_type), total_(weights.total_bytes()),
      progress_(progress && total_ > (100u << 20)) {}

const TensorView& TensorReader::checked(const std::string& name, const std::vector<int64_t>& expected) const {
  const TensorView* view = weights_.find(name);
  if (view == nullptr) {
    throw std::runtime_error("missing tensor '" + name + "' (expected shape " + shape_text(expected) + ") in " + dir_);
  }
  const std::string file = weights_.path_of(name);
  if (view->shape != expected) {
    throw std::runtime_error("tensor '" + name + "' has shape " + shape_text(view->shape) + ", expected " +
                             shape_text(expected) + " (in " + file + ")");
  }
  if (view->dtype == DType::Other) {
    throw std::runtime_error("tensor '" + name + "' in " + file + " has dtype " + view->dtype_text +
                             ", which the engine cannot use (supported: F32, F16, BF16)");
  }
  return *view;
}

torch::Tensor TensorReader::read_raw(const std::string& name, const std::vector<int64_t>& expected) {
  const TensorView& view = checked(name, expected);
  // Copy: the mapped bytes may be unaligned for the element type, and the
  // mapping goes away after loading.
  torch::Tensor raw = torch::empty(view.shape, torch::TensorOptions().dtype(torch_dtype(view.dtype)));
  std::memcpy(raw.data_ptr(), view.data, view.nbytes);
  report(view.nbytes);
  return raw;
}

torch::Tensor TensorReader::read(const std::string& name, const std::vector<int64_t>& expected) {
  return read_raw(name, expected).to(options_).contiguous();
}

torch::Tensor TensorReader::to_storage(const torch::Tensor& w) const {
  if (!matrix_type_) return w.to(options_).contiguous();
  const kernels::WeightType type = *matrix_type_;
  const int64_t cols = w.size(1);
  switch (type) {
    case kernels::WeightType::kF16: return with_padded_rows(w.to(torch::kFloat16), type, cols);
    case kernels::WeightType::kBF16: return with_padded_rows(w.to(torch::kBFloat16), type, cols);
    case kernels::WeightType::kQ8: {
      const torch::Tensor f = w.to(torch::kFloat32).contiguous();
      torch::Tensor q = torch::empty({f.size(0), kernels::q8_row_bytes(cols)}, torch::TensorOptions().dtype(torch::kInt8));
      kernels::quantize_q8(f.data_ptr<float>(), f.size(0), cols, q.data_ptr());
      return with_padded_rows(q, type, cols);
    }
    default: return with_padded_rows(w.to(torch::kFloat32), type, cols);
  }
}

void TensorReader::report(size_t bytes) {
  if (!progress_) return;
  loaded_ += bytes;
  const int decile = static_cast<int>(10 * loaded_ / total_);
  if (decile > last_decile_) {
    last_decile_ = decile;
    std::cerr << "reprox: loading weights " << 10 * decile << "% (" << (loaded_ >> 20) << " / " << (total_ >> 20)
              << " MiB)" << std::endl;
  }
}

}  // namespace reprox::engine
