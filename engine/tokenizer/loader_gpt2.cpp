// Builds a Tokenizer from GPT-2's vocab.json + merges.txt, and picks the
// format for a model directory.
#include <simdjson.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "engine/tokenizer/tokenizer.hpp"
#include "engine/tokenizer/tokenizer_impl.hpp"

namespace reprox::tok {

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("tokenizer: cannot open " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool file_exists(const std::string& path) { return static_cast<bool>(std::ifstream(path)); }

}  // namespace

std::shared_ptr<const Tokenizer> Tokenizer::load_gpt2(const std::string& vocab_json, const std::string& merges_txt) {
  BpeConfig cfg;
  {
    simdjson::dom::parser parser;
    const simdjson::padded_string text(read_file(vocab_json));
    auto doc = parser.parse(text);
    if (doc.error()) throw std::runtime_error("tokenizer: " + vocab_json + ": invalid JSON");
    auto obj = doc.value().get_object();
    if (obj.error()) throw std::runtime_error("tokenizer: " + vocab_json + ": expected an object of token ids");
    for (auto field : obj.value()) {
      auto id = field.value.get_int64();
      if (id.error()) throw std::runtime_error("tokenizer: " + vocab_json + ": id of '" + std::string(field.key) + "' is not an integer");
      cfg.vocab.emplace_back(std::string(field.key), static_cast<int32_t>(id.value()));
    }
  }
  {
    std::istringstream lines(read_file(merges_txt));
    std::string line;
    while (std::getline(lines, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.empty() || line.rfind("#version", 0) == 0) continue;
      const size_t sp = line.find(' ');
      if (sp == std::string::npos) throw std::runtime_error("tokenizer: " + merges_txt + ": bad merge line '" + line + "'");
      cfg.merges.emplace_back(line.substr(0, sp), line.substr(sp + 1));
    }
  }
  auto impl = std::make_unique<Impl>();
  impl->model = std::make_unique<BpeModel>(std::move(cfg));
  impl->pre_tokenizer = make_byte_level_pre_tokenizer(/*add_prefix_space=*/false, /*use_regex=*/true);
  impl->decoder = make_byte_level_decoder();
  if (auto eot = impl->model->token_to_id("<|endoftext|>")) {
    AddedToken t;
    t.id = *eot;
    t.content = "<|endoftext|>";
    t.special = true;
    impl->added.push_back(std::move(t));
  }
  impl->index_added_tokens();
  return std::make_shared<const Tokenizer>(std::move(impl));
}

std::shared_ptr<const Tokenizer> Tokenizer::load_dir(const std::string& dir) {
  const std::string json = dir + "/tokenizer.json";
  if (file_exists(json)) return load_tokenizer_json(json);
  const std::string vocab = dir + "/vocab.json";
  const std::string merges = dir + "/merges.txt";
  if (file_exists(vocab) && file_exists(merges)) return load_gpt2(vocab, merges);
  throw std::runtime_error("tokenizer: " + dir + " has neither tokenizer.json nor vocab.json + merges.txt (missing " +
                           json + (file_exists(vocab) ? "" : ", " + vocab) + (file_exists(merges) ? "" : ", " + merges) +
                           ")");
}

}  // namespace reprox::tok
