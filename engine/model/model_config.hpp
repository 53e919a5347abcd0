#pragma once
// The architecture description of a Hugging Face model folder, read from
// config.json and generation_config.json. Torch-free.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace reprox::engine {

enum class ArchFamily {
  kLlama,  // LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM
  kGpt2,   // GPT2LMHeadModel
};

struct RopeScaling {
  std::string type;  // "" (none/default) or "llama3"
  double factor = 1.0;
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
  int64_t original_max_positions = 8192;
};

struct ModelConfig {
  std::string arch;  // config.json architectures[0]
  ArchFamily family = ArchFamily::kLlama;
  int64_t vocab_size = 0;
  int64_t hidden = 0;
  int64_t n_layers = 0;
  int64_t n_heads = 0;
  int64_t n_kv_heads = 0;
  int64_t head_dim = 0;
  int64_t intermediate = 0;
  int64_t max_positions = 0;  // the context served: max_position_embeddings, or sliding_window when smaller
  // > 0 when config.json's sliding window was smaller than its
  // max_position_embeddings and so became max_positions (see load_model_config).
  int64_t sliding_window = 0;
  double rope_theta = 10000.0;
  RopeScaling rope_scaling;
  double norm_eps = 1e-6;
  bool tie_embeddings = false;  // as stated in config.json; lm_head absent also ties
  bool attention_bias = false;  // q/k/v (and o, except Qwen2) carry biases
  bool o_proj_bias = false;
  bool mlp_bias = false;
  bool qk_norm = false;         // Qwen3: per-head RMSNorm on q and k before RoPE
  std::vector<int32_t> eos_ids;
  std::optional<int32_t> bos_id;
};

// Reads and validates `dir`/config.json (+ generation_config.json when present).
// Throws std::runtime_error naming the file and the offending setting.
ModelConfig load_model_config(const std::string& dir);

// RoPE inverse frequencies, [head_dim / 2], with rope_scaling applied.
std::vector<double> rope_inverse_frequencies(const ModelConfig& config);

}  // namespace reprox::engine
