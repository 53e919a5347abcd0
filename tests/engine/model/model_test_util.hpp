#pragma once
// Helpers shared by the model tests: tiny models in a scratch folder.
#include <cstdint>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "engine/tiny/make_tiny_model.hpp"

namespace reprox::testutil {

// Folders made by scratch_dir, removed when the process exits.
inline std::vector<std::filesystem::path>& scratch_dirs() {
  static std::vector<std::filesystem::path> dirs;
  static const bool registered = [] {
    std::atexit([] {
      std::error_code ignored;
      for (const auto& dir : scratch_dirs()) std::filesystem::remove_all(dir, ignored);
    });
    return true;
  }();
  (void)registered;
  return dirs;
}

// A fresh empty folder under the test temp dir, private to this process.
inline std::string scratch_dir(const std::string& name) {
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / ("reprox_model_" + std::to_string(::getpid()) + "_" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  scratch_dirs().push_back(dir);
  return dir.string();
}

// Tiny-model options with the npm fixtures from CMake (REPROX_NPM_DIR).
inline engine::TinyModelOptions tiny_options(const std::string& arch, const std::string& out_dir) {
  engine::TinyModelOptions o;
  o.arch = arch;
  o.out_dir = out_dir;
  o.npm_fixtures_dir = REPROX_NPM_DIR;
  o.hidden = 64;
  o.layers = 2;
  o.heads = 4;
  o.kv_heads = arch == "gpt2" ? 4 : 2;
  o.intermediate = 128;
  o.max_positions = 256;
  return o;
}

// `n` token ids spread over [0, vocab) from a fixed LCG.
inline std::vector<int32_t> prompt_tokens(size_t n, int64_t vocab, uint64_t seed = 7) {
  std::vector<int32_t> out;
  for (size_t i = 0; i < n; ++i) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    out.push_back(static_cast<int32_t>((seed >> 33) % static_cast<uint64_t>(vocab)));
  }
  return out;
}

}  // namespace reprox::testutil
