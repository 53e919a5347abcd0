#include "engine/model/weight_set.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <stdexcept>

#include <simdjson.h>

namespace reprox::engine {
namespace fs = std::filesystem;

WeightSet WeightSet::open(const std::string& dir) {
  WeightSet set;
  const fs::path single = fs::path(dir) / "model.safetensors";
  const fs::path index = fs::path(dir) / "model.safetensors.index.json";
  std::set<std::string> shard_names;
  if (fs::exists(single)) {
    shard_names.insert(single.filename().string());
  } else if (fs::exists(index)) {
    simdjson::dom::parser parser;
    simdjson::padded_string text;
    simdjson::dom::object weight_map;
    if (simdjson::padded_string::load(index.string()).get(text) ||
        parser.parse(text)["weight_map"].get(weight_map)) {
      throw std::runtime_error(index.string() + ": missing or malformed 'weight_map'");
    }
    for (auto entry : weight_map) {
      std::string_view file;
      if (entry.value.get(file)) throw std::runtime_error(index.string() + ": non-string shard name");
      shard_names.insert(std::string(file));
    }
  } else {
    throw std::runtime_error("missing file: " + single.string() + " (nor " + index.filename().string() + ")");
  }
  for (const std::string& name : shard_names) {
    const fs::path path = fs::path(dir) / name;
    if (!fs::exists(path)) throw std::runtime_error("missing file: " + path.string());
    set.files_.push_back(std::make_unique<SafetensorsFile>(path.string()));
  }
  return set;
}

const TensorView* WeightSet::find(const std::string& name) const {
  for (const auto& file : files_) {
    if (const TensorView* view = file->find(name)) return view;
  }
  return nullptr;
}

std::string WeightSet::path_of(const std::string& name) const {
  for (const auto& file : files_) {
    if (file->find(name) != nullptr) return file->path();
  }
  return "";
}

size_t WeightSet::total_bytes() const {
  size_t total = 0;
  for (const auto& file : files_) total += file->data_bytes().size();
  return total;
}

std::string compute_weights_fingerprint(const std::string& config_path, const WeightSet& weights) {
  std::ifstream config_file(config_path, std::ios::binary);
  if (!config_file) throw std::runtime_error("cannot read " + config_path);
  const std::string config_bytes((std::istreambuf_iterator<char>(config_file)), std::istreambuf_iterator<char>());

  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
  if (!ctx || EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) != 1) {
    throw std::runtime_error("SHA-256 unavailable");
  }
  EVP_DigestUpdate(ctx.get(), config_bytes.data(), config_bytes.size());
  for (const auto& file : weights.files()) {
    const std::string_view header = file->header_bytes();
    const std::string_view data = file->data_bytes();
    EVP_DigestUpdate(ctx.get(), header.data(), header.size());
    EVP_DigestUpdate(ctx.get(), data.data(), data.size());
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx.get(), digest, &len);
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned int i = 0; i < len; ++i) {
    out.push_back(hex[digest[i] >> 4]);
    out.push_back(hex[digest[i] & 15]);
  }
  return out;
}

}  // namespace reprox::engine
