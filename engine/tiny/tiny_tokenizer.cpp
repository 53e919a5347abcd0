#include "engine/tiny/tiny_tokenizer.hpp"

#include "common/json.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include <simdjson.h>

namespace reprox::engine {
namespace {
namespace fs = std::filesystem;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void write_file(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

bool is_hf_tokenizer(const fs::path& dir) { return fs::exists(dir / "tokenizer.json"); }

fs::path first_existing(const fs::path& dir, const char* a, const char* b) {
  if (fs::exists(dir / a)) return dir / a;
  if (fs::exists(dir / b)) return dir / b;
  throw std::runtime_error("tokenizer folder " + dir.string() + " has neither " + a + " nor " + b);
}

// simdjson refuses integers beyond 64 bits (Llama's tokenizer_config has
// model_max_length 1000000000000000019884624838656); such runs of digits are
// replaced by 0 in the text we inspect. The copied files keep the original.
std::string without_big_integers(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    size_t j = i;
    while (j < text.size() && text[j] >= '0' && text[j] <= '9') ++j;
    if (j - i >= 19) {
      out.push_back('0');
    } else {
      out.append(text, i, std::max<size_t>(j - i, 1));
    }
    i = std::max(j, i + 1);
  }
  return out;
}

simdjson::dom::element parse(simdjson::dom::parser& parser, const fs::path& path, simdjson::padded_string& text) {
  text = simdjson::padded_string(without_big_integers(read_file(path)));
  simdjson::dom::element root;
  if (parser.parse(text).get(root)) throw std::runtime_error("malformed JSON in " + path.string());
  return root;
}

// A special token in tokenizer_config.json is a string or {"content": string}.
std::optional<std::string> special_token(simdjson::dom::element config, const char* key) {
  simdjson::dom::element value;
  if (config[key].get(value) || value.is_null()) return std::nullopt;
  std::string_view text;
  if (!value.get(text) || !value["content"].get(text)) return std::string(text);
  return std::nullopt;
}

std::optional<int32_t> id_of(simdjson::dom::element tokenizer, const std::string& content) {
  simdjson::dom::array added;
  if (!tokenizer["added_tokens"].get(added)) {
    for (auto token : added) {
      std::string_view text;
      int64_t id = 0;
      if (!token["content"].get(text) && text == content && !token["id"].get(id)) return static_cast<int32_t>(id);
    }
  }
  int64_t id = 0;
  if (!tokenizer["model"]["vocab"][content].get(id)) return static_cast<int32_t>(id);
  return std::nullopt;
}

TokenizerFacts inspect_hf(const fs::path& dir) {
  TokenizerFacts facts;
  simdjson::dom::parser parser;
  simdjson::padded_string text;
  const simdjson::dom::element tokenizer = parse(parser, dir / "tokenizer.json", text);
  int64_t max_id = -1;
  simdjson::dom::object vocab;
  if (!tokenizer["model"]["vocab"].get(vocab)) {
    for (auto entry : vocab) {
      int64_t id = 0;
      if (!entry.value.get(id)) max_id = std::max(max_id, id);
    }
  } else {
    simdjson::dom::array unigram;  // Unigram models list [piece, score] pairs
    if (tokenizer["model"]["vocab"].get(unigram)) throw std::runtime_error("no model.vocab in tokenizer.json");
    max_id = static_cast<int64_t>(unigram.size()) - 1;
  }
  simdjson::dom::array added;
  if (!tokenizer["added_tokens"].get(added)) {
    for (auto token : added) {
      int64_t id = 0;
      if (!token["id"].get(id)) max_id = std::max(max_id, id);
    }
  }
  facts.id_range = max_id + 1;

  if (!fs::exists(dir / "tokenizer_config.json")) return facts;
  simdjson::dom::parser config_parser;
  simdjson::padded_string config_text;
  const simdjson::dom::element config = parse(config_parser, dir / "tokenizer_config.json", config_text);
  if (const auto eos = special_token(config, "eos_token")) {
    if (const auto id = id_of(tokenizer, *eos)) facts.eos_ids.push_back(*id);
  }
  // Qwen-style models also stop on <|endoftext|> and use it as bos.
  const auto end_of_text = id_of(tokenizer, "<|endoftext|>");
  if (end_of_text && std::find(facts.eos_ids.begin(), facts.eos_ids.end(), *end_of_text) == facts.eos_ids.end()) {
    facts.eos_ids.push_back(*end_of_text);
  }
  if (const auto bos = special_token(config, "bos_token")) facts.bos_id = id_of(tokenizer, *bos);
  if (!facts.bos_id) facts.bos_id = end_of_text;
  return facts;
}

TokenizerFacts inspect_gpt2(const fs::path& dir) {
  TokenizerFacts facts;
  simdjson::dom::parser parser;
  simdjson::padded_string text;
  simdjson::dom::object encoder;
  if (parse(parser, first_existing(dir, "vocab.json", "encoder.json"), text).get(encoder)) {
    throw std::runtime_error("GPT-2 vocabulary in " + dir.string() + " is not a JSON object");
  }
  int64_t max_id = -1;
  std::optional<int32_t> end_of_text;
  for (auto entry : encoder) {
    int64_t id = 0;
    if (entry.value.get(id)) continue;
    max_id = std::max(max_id, id);
    if (entry.key == "<|endoftext|>") end_of_text = static_cast<int32_t>(id);
  }
  facts.id_range = max_id + 1;
  if (end_of_text) {
    facts.eos_ids.push_back(*end_of_text);
    facts.bos_id = end_of_text;
  }
  return facts;
}

}  // namespace

std::string json_quote(const std::string& text) {
  std::string out;
  json::write_string(out, text);
  return out;
}

TokenizerFacts inspect_tokenizer(const std::string& source_dir) {
  const fs::path dir(source_dir);
  if (!fs::is_directory(dir)) throw std::runtime_error("tokenizer folder not found: " + source_dir);
  return is_hf_tokenizer(dir) ? inspect_hf(dir) : inspect_gpt2(dir);
}

void copy_tokenizer(const std::string& source_dir, const std::string& out_dir, const std::string& chat_template) {
  const fs::path src(source_dir), out(out_dir);
  std::string config;
  if (is_hf_tokenizer(src)) {
    fs::copy_file(src / "tokenizer.json", out / "tokenizer.json", fs::copy_options::overwrite_existing);
    config = fs::exists(src / "tokenizer_config.json") ? read_file(src / "tokenizer_config.json") : "{}";
  } else {
    fs::copy_file(first_existing(src, "vocab.json", "encoder.json"), out / "vocab.json",
                  fs::copy_options::overwrite_existing);
    fs::copy_file(first_existing(src, "merges.txt", "vocab.bpe"), out / "merges.txt",
                  fs::copy_options::overwrite_existing);
    config = fs::exists(src / "tokenizer_config.json")
                 ? read_file(src / "tokenizer_config.json")
                 : "{\n  \"tokenizer_class\": \"GPT2Tokenizer\",\n  \"add_prefix_space\": false,\n"
                   "  \"bos_token\": \"<|endoftext|>\",\n  \"eos_token\": \"<|endoftext|>\",\n"
                   "  \"unk_token\": \"<|endoftext|>\",\n  \"model_max_length\": 1024\n}\n";
  }
  simdjson::dom::parser parser;
  simdjson::padded_string text(without_big_integers(config));
  simdjson::dom::object root;
  if (parser.parse(text).get(root)) throw std::runtime_error("malformed tokenizer_config.json in " + source_dir);
  simdjson::dom::element existing;
  const bool has_template = !root["chat_template"].get(existing) && !existing.is_null();
  if (!has_template && !chat_template.empty()) {
    const size_t brace = config.find('{');
    const bool empty_object = root.size() == 0;
    config.insert(brace + 1, "\n  \"chat_template\": " + json_quote(chat_template) + (empty_object ? "\n" : ","));
  }
  write_file(out / "tokenizer_config.json", config);
}

}  // namespace reprox::engine
