// Fuzz target: the safetensors header parser (parse_safetensors, in memory)
// and the config.json loader (load_model_config, from a private temporary
// directory). The first input byte picks one: even, the rest is a
// safetensors image; odd, the rest is config.json.
// Properties: malformed input is a std::runtime_error, never a crash; every
// tensor an accepted header lists lies inside the data section and its byte
// size matches its shape and dtype; an accepted config has positive sizes
// and a head_dim that divides evenly.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>

#include "engine/model/model_config.hpp"
#include "engine/model/safetensors.hpp"
#include "tests/fuzz/fuzz_check.hpp"

namespace {

using namespace reprox::engine;

std::string g_dir;  // holds config.json for the config mode

void check_safetensors(const uint8_t* data, size_t size) {
  SafetensorsIndex index;
  try {
    index = parse_safetensors(data, size, "fuzz");
  } catch (const std::runtime_error&) {
    return;
  }
  const uint8_t* begin = data + 8 + index.header_len;
  const uint8_t* end = data + size;
  for (const auto& [name, view] : index.tensors) {
    FUZZ_CHECK(view.data >= begin && view.data + view.nbytes <= end, "a tensor lies inside the data section");
    FUZZ_CHECK(static_cast<size_t>(view.numel()) * dtype_name_size(view.dtype_text) == view.nbytes,
               "a tensor's byte size matches its shape");
    for (size_t i = 0; i < view.nbytes; ++i) (void)*(volatile const uint8_t*)(view.data + i);
  }
}

void check_config(const uint8_t* data, size_t size) {
  {
    std::ofstream out(g_dir + "/config.json", std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  ModelConfig config;
  try {
    config = load_model_config(g_dir);
  } catch (const std::runtime_error&) {
    return;
  }
  FUZZ_CHECK(config.vocab_size > 0 && config.hidden > 0 && config.n_layers > 0, "sizes are positive");
  FUZZ_CHECK(config.n_heads > 0 && config.n_kv_heads > 0 && config.n_heads % config.n_kv_heads == 0,
             "heads divide evenly");
  FUZZ_CHECK(config.head_dim > 0, "head_dim is positive");
  if (config.head_dim <= 4096) rope_inverse_frequencies(config);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  char tmpl[] = "/tmp/reprox-fuzz-safetensors-XXXXXX";
  if (!mkdtemp(tmpl)) std::abort();
  g_dir = tmpl;
  std::atexit([] {
    std::remove((g_dir + "/config.json").c_str());
    rmdir(g_dir.c_str());
  });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  if (data[0] % 2 == 0)
    check_safetensors(data + 1, size - 1);
  else
    check_config(data + 1, size - 1);
  return 0;
}
