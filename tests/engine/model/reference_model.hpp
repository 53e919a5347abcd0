#pragma once
// An independent reference forward pass for the tests: plain C++ loops in
// double precision, its own config and safetensors reading, no torch and no
// engine code. Slow; meant for tiny models only.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace reprox::testref {

struct RefTensor {
  std::vector<int64_t> shape;
  std::vector<double> values;  // row-major
  double at(int64_t r, int64_t c) const { return values[static_cast<size_t>(r * shape[1] + c)]; }
};

// Reads every tensor of `dir` (model.safetensors or the shards of
// model.safetensors.index.json), decoding F32/F16/BF16 to double.
std::map<std::string, RefTensor> read_all_tensors(const std::string& dir);

class ReferenceModel {
 public:
  explicit ReferenceModel(const std::string& dir);
  // Logits for every position: [tokens.size()][vocab].
  std::vector<std::vector<double>> logits(const std::vector<int32_t>& tokens) const;

 private:
  using Vec = std::vector<double>;
  const RefTensor& w(const std::string& name) const;
  bool has(const std::string& name) const { return tensors_.count(name) != 0; }
  std::vector<Vec> llama_forward(const std::vector<int32_t>& tokens) const;
  std::vector<Vec> gpt2_forward(const std::vector<int32_t>& tokens) const;

  std::map<std::string, RefTensor> tensors_;
  std::string arch_;
  int64_t vocab_ = 0, hidden_ = 0, layers_ = 0, heads_ = 0, kv_heads_ = 0, head_dim_ = 0;
  double eps_ = 0, theta_ = 10000;
  bool tied_ = false;
  std::map<std::string, double> rope_scaling_;  // llama3 parameters when present
};

}  // namespace reprox::testref
