#pragma once
// All safetensors shards of a model folder, memory-mapped, with lookup by
// tensor name. Torch-free.
#include <memory>
#include <string>
#include <vector>

#include "engine/model/safetensors.hpp"

namespace reprox::engine {

class WeightSet {
 public:
  // Opens `dir`/model.safetensors, or every shard named in
  // `dir`/model.safetensors.index.json. Throws naming the missing file.
  static WeightSet open(const std::string& dir);

  // nullptr when no shard holds `name`.
  const TensorView* find(const std::string& name) const;
  // The path of the shard holding `name` ("" when none does).
  std::string path_of(const std::string& name) const;
  const std::vector<std::unique_ptr<SafetensorsFile>>& files() const { return files_; }
  size_t total_bytes() const;  // tensor bytes over all shards

 private:
  std::vector<std::unique_ptr<SafetensorsFile>> files_;  // sorted by file name
};

// Lowercase hex SHA-256 over config.json's bytes and then, for each shard in
// file-name order, its whole content (length prefix, JSON header, every tensor
// byte). Nothing is sampled.
std::string compute_weights_fingerprint(const std::string& config_path, const WeightSet& weights);

}  // namespace reprox::engine
