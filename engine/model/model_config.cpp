#include "engine/model/model_config.hpp"

#include <cmath>
#include <filesystem>
#include <stdexcept>

#include <simdjson.h>

namespace reprox::engine {
namespace {

namespace fs = std::filesystem;

simdjson::dom::element parse_json_file(simdjson::dom::parser& parser, const fs::path& path) {
  simdjson::padded_string text;
  if (simdjson::padded_string::load(path.string()).get(text)) {
    throw std::runtime_error("cannot read " + path.string());
  }
  simdjson::dom::element root;
  if (parser.parse(text).get(root) || !root.is_object()) {
    throw std::runtime_error(path.string() + " is not a JSON object");
  }
  return root;
}

// Reads config fields, reporting missing or mistyped required ones with the file name.
class ConfigReader {
 public:
  ConfigReader(simdjson::dom::element root, std::string file) : root_(root), file_(std::move(file)) {}

  bool has(const char* key) const {
    simdjson::dom::element value;
    return !root_[key].get(value) && !value.is_null();
  }
  int64_t integer(const char* key) const {
    int64_t v = 0;
    if (root_[key].get(v)) throw std::runtime_error(file_ + ": missing or non-integer field '" + key + "'");
    return v;
  }
  int64_t integer_or(const char* key, int64_t fallback) const { return has(key) ? integer(key) : fallback; }
  double number_or(const char* key, double fallback) const {
    if (!has(key)) return fallback;
    double v = 0;
    if (root_[key].get(v)) throw std::runtime_error(file_ + ": non-numeric field '" + key + "'");
    return v;
  }
  bool boolean_or(const char* key, bool fallback) const {
    if (!has(key)) return fallback;
    bool v = false;
    if (root_[key].get(v)) throw std::runtime_error(file_ + ": non-boolean field '" + key + "'");
    return v;
  }
  std::string string_or(const char* key, const std::string& fallback) const {
    if (!has(key)) return fallback;
    std::string_view v;
    if (root_[key].get(v)) throw std::runtime_error(file_ + ": non-string field '" + key + "'");
    return std::string(v);
  }
  simdjson::dom::element root() const { return root_; }
  const std::string& file() const { return file_; }

 private:
  simdjson::dom::element root_;
  std::string file_;
};

// eos_token_id may be an integer or a list of integers.
void read_token_ids(simdjson::dom::element root, const char* key, std::vector<int32_t>& out) {
  simdjson::dom::element value;
  if (root[key].get(value) || value.is_null()) return;
  out.clear();
  int64_t single = 0;
  simdjson::dom::array list;
  if (!value.get(single)) {
    out.push_back(static_cast<int32_t>(single));
  } else if (!value.get(list)) {
    for (auto item : list) {
      int64_t id = 0;
      if (!item.get(id)) out.push_back(static_cast<int32_t>(id));
    }
  }
}

void read_rope_scaling(const ConfigReader& reader, ModelConfig& config) {
  simdjson::dom::element value;
  if (reader.root()["rope_scaling"].get(value) || value.is_null()) return;
  ConfigReader scaling(value, reader.file() + " rope_scaling");
  std::string type = scaling.string_or("rope_type", scaling.string_or("type", "default"));
  if (type == "default") return;
  if (type != "llama3") {
    throw std::runtime_error(reader.file() + ": unsupported rope_scaling type '" + type +
                             "' (supported: llama3)");
  }
  config.rope_scaling.type = type;
  config.rope_scaling.factor = scaling.number_or("factor", 8.0);
  config.rope_scaling.low_freq_factor = scaling.number_or("low_freq_factor", 1.0);
  config.rope_scaling.high_freq_factor = scaling.number_or("high_freq_factor", 4.0);
  config.rope_scaling.original_max_positions = scaling.integer_or("original_max_position_embeddings", 8192);
}

// Sliding-window attention lets a query see only the last `sliding_window`
// positions. Over a context of at most that many positions it is plain causal
// attention, so the context is capped at the window: every answer is then
// exactly what the model's own attention gives, and a longer prompt is refused
// as past the context window.
void cap_context_at_sliding_window(const ConfigReader& r, ModelConfig& c) {
  const int64_t window = r.integer("sliding_window");
  if (window <= 0) throw std::runtime_error(r.file() + ": sliding_window must be positive");
  if (window >= c.max_positions) return;
  c.sliding_window = window;
  c.max_positions = window;
}

void read_llama_family(const ConfigReader& r, ModelConfig& c) {
  c.family = ArchFamily::kLlama;
  c.vocab_size = r.integer("vocab_size");
  c.hidden = r.integer("hidden_size");
  c.n_layers = r.integer("num_hidden_layers");
  c.n_heads = r.integer("num_attention_heads");
  c.n_kv_heads = r.integer_or("num_key_value_heads", c.n_heads);
  c.head_dim = r.integer_or("head_dim", c.n_heads > 0 ? c.hidden / c.n_heads : 0);
  c.intermediate = r.integer("intermediate_size");
  c.max_positions = r.integer_or("max_position_embeddings", 2048);
  c.rope_theta = r.number_or("rope_theta", 10000.0);
  c.norm_eps = r.number_or("rms_norm_eps", 1e-6);
  c.tie_embeddings = r.boolean_or("tie_word_embeddings", false);
  const std::string act = r.string_or("hidden_act", "silu");
  if (act != "silu") throw std::runtime_error(r.file() + ": unsupported hidden_act '" + act + "' (supported: silu)");
  if (r.number_or("partial_rotary_factor", 1.0) != 1.0) {
    throw std::runtime_error(r.file() + ": unsupported partial_rotary_factor (only 1.0)");
  }
  read_rope_scaling(r, c);

  if (c.arch == "LlamaForCausalLM") {
    c.attention_bias = r.boolean_or("attention_bias", false);
    c.o_proj_bias = c.attention_bias;
    c.mlp_bias = r.boolean_or("mlp_bias", false);
  } else if (c.arch == "MistralForCausalLM") {
    if (r.has("sliding_window")) cap_context_at_sliding_window(r, c);
  } else if (c.arch == "Qwen2ForCausalLM" || c.arch == "Qwen3ForCausalLM") {
    // Qwen's sliding_window is only in effect with use_sliding_window.
    if (r.boolean_or("use_sliding_window", false)) cap_context_at_sliding_window(r, c);
    if (c.arch == "Qwen2ForCausalLM") {
      c.attention_bias = true;  // q/k/v always carry biases, o_proj never does
    } else {
      c.attention_bias = r.boolean_or("attention_bias", false);
      c.o_proj_bias = c.attention_bias;
      c.qk_norm = true;
    }
  }
}

void read_gpt2(const ConfigReader& r, ModelConfig& c) {
  c.family = ArchFamily::kGpt2;
  c.vocab_size = r.integer("vocab_size");
  c.hidden = r.integer("n_embd");
  c.n_layers = r.integer("n_layer");
  c.n_heads = r.integer("n_head");
  c.n_kv_heads = c.n_heads;
  c.head_dim = c.n_heads > 0 ? c.hidden / c.n_heads : 0;
  int64_t default_inner = 0;  // 4 * n_embd
  if (__builtin_mul_overflow(c.hidden, int64_t{4}, &default_inner)) {
    throw std::runtime_error(r.file() + ": n_embd out of range");
  }
  c.intermediate = r.integer_or("n_inner", default_inner);
  c.max_positions = r.integer("n_positions");
  c.norm_eps = r.number_or("layer_norm_epsilon", 1e-5);
  c.tie_embeddings = r.boolean_or("tie_word_embeddings", true);
  c.attention_bias = true;
  c.o_proj_bias = true;
  c.mlp_bias = true;
  const std::string act = r.string_or("activation_function", "gelu_new");
  if (act != "gelu_new" && act != "gelu_pytorch_tanh") {
    throw std::runtime_error(r.file() + ": unsupported activation_function '" + act +
                             "' (supported: gelu_new, gelu_pytorch_tanh)");
  }
  if (r.boolean_or("scale_attn_by_inverse_layer_idx", false) || r.boolean_or("reorder_and_upcast_attn", false)) {
    throw std::runtime_error(r.file() + ": unsupported GPT-2 attention variant");
  }
}

void validate(const ModelConfig& c, const std::string& file) {
  const auto need = [&](bool ok, const std::string& what) {
    if (!ok) throw std::runtime_error(file + ": invalid configuration: " + what);
  };
  need(c.vocab_size > 0 && c.hidden > 0 && c.n_layers > 0 && c.intermediate > 0 && c.max_positions > 0,
       "sizes must be positive");
  need(c.n_heads > 0 && c.n_kv_heads > 0 && c.n_heads % c.n_kv_heads == 0,
       "num_attention_heads must be a positive multiple of num_key_value_heads");
  need(c.head_dim > 0 && (c.family == ArchFamily::kGpt2 || c.head_dim % 2 == 0), "head_dim must be positive and even");
  need(c.family != ArchFamily::kGpt2 || c.hidden % c.n_heads == 0, "n_embd must be divisible by n_head");
}

}  // namespace

ModelConfig load_model_config(const std::string& dir) {
  const fs::path config_path = fs::path(dir) / "config.json";
  if (!fs::exists(config_path)) throw std::runtime_error("missing file: " + config_path.string());
  simdjson::dom::parser parser;
  const ConfigReader reader(parse_json_file(parser, config_path), config_path.string());

  ModelConfig config;
  simdjson::dom::array archs;
  std::string_view arch;
  if (reader.root()["architectures"].get(archs) || archs.size() == 0 || archs.at(0).get(arch)) {
    throw std::runtime_error(config_path.string() + ": missing field 'architectures'");
  }
  config.arch = std::string(arch);
  if (config.arch == "LlamaForCausalLM" || config.arch == "MistralForCausalLM" ||
      config.arch == "Qwen2ForCausalLM" || config.arch == "Qwen3ForCausalLM") {
    read_llama_family(reader, config);
  } else if (config.arch == "GPT2LMHeadModel") {
    read_gpt2(reader, config);
  } else {
    throw std::runtime_error(config_path.string() + ": unsupported architecture '" + config.arch +
                             "' (supported: LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, "
                             "Qwen3ForCausalLM, GPT2LMHeadModel)");
  }
  validate(config, config_path.string());

  read_token_ids(reader.root(), "eos_token_id", config.eos_ids);
  std::vector<int32_t> bos;
  read_token_ids(reader.root(), "bos_token_id", bos);
  const fs::path gen_path = fs::path(dir) / "generation_config.json";
  if (fs::exists(gen_path)) {
    simdjson::dom::parser gen_parser;
    const simdjson::dom::element gen = parse_json_file(gen_parser, gen_path);
    read_token_ids(gen, "eos_token_id", config.eos_ids);  // generation_config wins
    read_token_ids(gen, "bos_token_id", bos);
  }
  if (!bos.empty()) config.bos_id = bos.front();
  return config;
}

std::vector<double> rope_inverse_frequencies(const ModelConfig& config) {
  const int64_t half = config.head_dim / 2;
  std::vector<double> inv(static_cast<size_t>(half));
  for (int64_t i = 0; i < half; ++i) {
    inv[i] = 1.0 / std::pow(config.rope_theta, static_cast<double>(2 * i) / static_cast<double>(config.head_dim));
  }
  if (config.rope_scaling.type == "llama3") {
    const RopeScaling& s = config.rope_scaling;
    const double old_len = static_cast<double>(s.original_max_positions);
    const double low_freq_wavelen = old_len / s.low_freq_factor;
    const double high_freq_wavelen = old_len / s.high_freq_factor;
    for (double& f : inv) {
      const double wavelen = 2.0 * M_PI / f;
      if (wavelen < high_freq_wavelen) continue;  // high frequency: unchanged
      if (wavelen > low_freq_wavelen) {
        f = f / s.factor;  // low frequency: scaled down
      } else {
        const double smooth = (old_len / wavelen - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
        f = (1.0 - smooth) * f / s.factor + smooth * f;
      }
    }
  }
  return inv;
}

}  // namespace reprox::engine
