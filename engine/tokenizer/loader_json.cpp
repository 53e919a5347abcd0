// Builds a Tokenizer from a Hugging Face tokenizer.json.
#include <simdjson.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "engine/tokenizer/tokenizer.hpp"
#include "engine/tokenizer/tokenizer_impl.hpp"

namespace reprox::tok {

namespace {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;

[[noreturn]] void fail(const std::string& origin, const std::string& what) {
  throw std::runtime_error("tokenizer: " + origin + ": " + what);
}

std::string get_string(const element& e, const char* key, const std::string& def = "") {
  auto v = e[key];
  if (v.error() || v.is_null()) return def;
  auto s = v.get_string();
  if (s.error()) return def;
  return std::string(s.value());
}

bool get_bool(const element& e, const char* key, bool def) {
  auto v = e[key];
  if (v.error() || v.is_null()) return def;
  auto b = v.get_bool();
  return b.error() ? def : b.value();
}

bool has(const element& e, const char* key) {
  auto v = e[key];
  return !v.error() && !v.is_null();
}

std::string type_of(const element& e, const std::string& origin, const char* what) {
  auto t = e["type"];
  if (t.error() || !t.is_string()) fail(origin, std::string(what) + " has no \"type\"");
  return std::string(t.get_string().value());
}

Pattern parse_pattern(const element& e, const std::string& origin) {
  auto p = e["pattern"];
  if (p.error()) fail(origin, "component has no \"pattern\"");
  if (has(p.value(), "String")) return Pattern::literal(get_string(p.value(), "String"));
  if (has(p.value(), "Regex")) return Pattern::regex(get_string(p.value(), "Regex"));
  fail(origin, "pattern must be {\"String\": ...} or {\"Regex\": ...}");
}

PrependScheme parse_prepend_scheme(const element& e) {
  const std::string s = get_string(e, "prepend_scheme");
  if (s == "first") return PrependScheme::First;
  if (s == "never") return PrependScheme::Never;
  if (s == "always") return PrependScheme::Always;
  return get_bool(e, "add_prefix_space", true) ? PrependScheme::Always : PrependScheme::Never;
}

std::unique_ptr<Normalizer> parse_normalizer(const element& e, const std::string& origin) {
  if (e.is_null()) return nullptr;
  const std::string type = type_of(e, origin, "normalizer");
  if (type == "NFC") return make_unicode_normalizer(UnicodeForm::NFC);
  if (type == "NFD") return make_unicode_normalizer(UnicodeForm::NFD);
  if (type == "NFKC") return make_unicode_normalizer(UnicodeForm::NFKC);
  if (type == "NFKD") return make_unicode_normalizer(UnicodeForm::NFKD);
  if (type == "Lowercase") return make_lowercase_normalizer();
  if (type == "Prepend") return make_prepend_normalizer(get_string(e, "prepend"));
  if (type == "Replace") return make_replace_normalizer(parse_pattern(e, origin), get_string(e, "content"));
  if (type == "Strip") return make_strip_normalizer(get_bool(e, "strip_left", true), get_bool(e, "strip_right", true));
  if (type == "Sequence") {
    std::vector<std::unique_ptr<Normalizer>> steps;
    auto arr = e["normalizers"].get_array();
    if (arr.error()) fail(origin, "Sequence normalizer has no \"normalizers\" array");
    for (element child : arr.value())
      if (auto n = parse_normalizer(child, origin)) steps.push_back(std::move(n));
    return make_sequence_normalizer(std::move(steps));
  }
  fail(origin, "unsupported normalizer type \"" + type + "\"");
}

SplitBehavior parse_behavior(const std::string& b, const std::string& origin) {
  if (b == "Removed") return SplitBehavior::Removed;
  if (b == "Isolated") return SplitBehavior::Isolated;
  if (b == "MergedWithPrevious") return SplitBehavior::MergedWithPrevious;
  if (b == "MergedWithNext") return SplitBehavior::MergedWithNext;
  if (b == "Contiguous") return SplitBehavior::Contiguous;
  fail(origin, "unsupported Split behavior \"" + b + "\"");
}

std::unique_ptr<PreTokenizer> parse_pre_tokenizer(const element& e, const std::string& origin) {
  if (e.is_null()) return nullptr;
  const std::string type = type_of(e, origin, "pre_tokenizer");
  if (type == "ByteLevel")
    return make_byte_level_pre_tokenizer(get_bool(e, "add_prefix_space", true), get_bool(e, "use_regex", true));
  if (type == "Split")
    return make_split_pre_tokenizer(parse_pattern(e, origin), parse_behavior(get_string(e, "behavior"), origin),
                                    get_bool(e, "invert", false));
  if (type == "Metaspace")
    return make_metaspace_pre_tokenizer(get_string(e, "replacement", "\xE2\x96\x81"), parse_prepend_scheme(e),
                                        get_bool(e, "split", true));
  if (type == "Sequence") {
    std::vector<std::unique_ptr<PreTokenizer>> steps;
    auto arr = e["pretokenizers"].get_array();
    if (arr.error()) fail(origin, "Sequence pre_tokenizer has no \"pretokenizers\" array");
    for (element child : arr.value())
      if (auto p = parse_pre_tokenizer(child, origin)) steps.push_back(std::move(p));
    return make_sequence_pre_tokenizer(std::move(steps));
  }
  fail(origin, "unsupported pre_tokenizer type \"" + type + "\"");
}

std::unique_ptr<Decoder> parse_decoder(const element& e, const std::string& origin, bool& has_byte_fallback) {
  if (e.is_null()) return nullptr;
  const std::string type = type_of(e, origin, "decoder");
  if (type == "ByteLevel") return make_byte_level_decoder();
  if (type == "Replace") return make_replace_decoder(parse_pattern(e, origin), get_string(e, "content"));
  if (type == "ByteFallback") {
    has_byte_fallback = true;
    return make_byte_fallback_decoder();
  }
  if (type == "Fuse") return make_fuse_decoder();
  if (type == "Strip") {
    auto start = e["start"].get_uint64();
    auto stop = e["stop"].get_uint64();
    return make_strip_decoder(get_string(e, "content", " "), start.error() ? 0 : start.value(),
                              stop.error() ? 0 : stop.value());
  }
  if (type == "Metaspace")
    return make_metaspace_decoder(get_string(e, "replacement", "\xE2\x96\x81"), parse_prepend_scheme(e));
  if (type == "Sequence") {
    std::vector<std::unique_ptr<Decoder>> steps;
    auto arr = e["decoders"].get_array();
    if (arr.error()) fail(origin, "Sequence decoder has no \"decoders\" array");
    for (element child : arr.value())
      if (auto d = parse_decoder(child, origin, has_byte_fallback)) steps.push_back(std::move(d));
    return make_sequence_decoder(std::move(steps));
  }
  fail(origin, "unsupported decoder type \"" + type + "\"");
}

std::unique_ptr<BpeModel> parse_model(const element& e, const std::string& origin) {
  if (e.is_null()) fail(origin, "no \"model\"");
  auto t = e["type"];
  const std::string type = (t.error() || !t.is_string()) ? "BPE" : std::string(t.get_string().value());
  if (type != "BPE") fail(origin, "unsupported model type \"" + type + "\" (only BPE is implemented)");
  BpeConfig cfg;
  auto vocab = e["vocab"].get_object();
  if (vocab.error()) fail(origin, "BPE model has no \"vocab\" object");
  cfg.vocab.reserve(vocab.value().size());
  for (auto field : vocab.value()) {
    auto id = field.value.get_int64();
    if (id.error()) fail(origin, "vocab id for '" + std::string(field.key) + "' is not an integer");
    cfg.vocab.emplace_back(std::string(field.key), static_cast<int32_t>(id.value()));
  }
  auto merges = e["merges"].get_array();
  if (!merges.error()) {
    for (element m : merges.value()) {
      if (m.is_string()) {
        const std::string_view s = m.get_string().value();
        const size_t sp = s.find(' ');
        if (sp == std::string_view::npos) fail(origin, "merge '" + std::string(s) + "' has no space");
        cfg.merges.emplace_back(std::string(s.substr(0, sp)), std::string(s.substr(sp + 1)));
      } else if (m.is_array()) {
        array pair = m.get_array().value();
        if (pair.size() != 2 || !pair.at(0).is_string() || !pair.at(1).is_string())
          fail(origin, "a merge array must hold two strings");
        cfg.merges.emplace_back(std::string(pair.at(0).get_string().value()),
                                std::string(pair.at(1).get_string().value()));
      } else {
        fail(origin, "a merge must be \"a b\" or [\"a\", \"b\"]");
      }
    }
  }
  if (has(e, "unk_token")) cfg.unk_token = get_string(e, "unk_token");
  cfg.fuse_unk = get_bool(e, "fuse_unk", false);
  cfg.byte_fallback = get_bool(e, "byte_fallback", false);
  cfg.ignore_merges = get_bool(e, "ignore_merges", false);
  cfg.continuing_subword_prefix = get_string(e, "continuing_subword_prefix");
  cfg.end_of_word_suffix = get_string(e, "end_of_word_suffix");
  if (has(e, "dropout")) {
    auto d = e["dropout"].get_double();
    if (!d.error() && d.value() > 0.0) fail(origin, "BPE dropout is not supported (non-deterministic)");
  }
  return std::make_unique<BpeModel>(std::move(cfg));
}

}  // namespace

std::shared_ptr<const Tokenizer> Tokenizer::from_json_text(std::string_view json, const std::string& origin) {
  simdjson::dom::parser parser;
  simdjson::padded_string padded(json);
  auto doc = parser.parse(padded);
  if (doc.error()) fail(origin, std::string("invalid JSON: ") + simdjson::error_message(doc.error()));
  const element root = doc.value();
  auto impl = std::make_unique<Impl>();
  if (root["model"].error()) fail(origin, "no \"model\"");
  impl->model = parse_model(root["model"].value(), origin);
  if (!root["normalizer"].error()) impl->normalizer = parse_normalizer(root["normalizer"].value(), origin);
  if (!root["pre_tokenizer"].error()) impl->pre_tokenizer = parse_pre_tokenizer(root["pre_tokenizer"].value(), origin);
  if (!root["decoder"].error()) impl->decoder = parse_decoder(root["decoder"].value(), origin, impl->byte_fallback_decoder);
  auto added = root["added_tokens"].get_array();
  if (!added.error()) {
    for (element a : added.value()) {
      AddedToken t;
      auto id = a["id"].get_int64();
      if (id.error()) fail(origin, "added token without an integer \"id\"");
      t.id = static_cast<int32_t>(id.value());
      t.content = get_string(a, "content");
      t.special = get_bool(a, "special", false);
      t.lstrip = get_bool(a, "lstrip", false);
      t.rstrip = get_bool(a, "rstrip", false);
      t.single_word = get_bool(a, "single_word", false);
      t.normalized = get_bool(a, "normalized", !t.special);
      if (t.content.empty()) fail(origin, "added token " + std::to_string(t.id) + " has empty content");
      impl->added.push_back(std::move(t));
    }
  }
  impl->index_added_tokens();
  return std::make_shared<const Tokenizer>(std::move(impl));
}

std::shared_ptr<const Tokenizer> Tokenizer::load_tokenizer_json(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("tokenizer: cannot open " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return from_json_text(ss.str(), path);
}

}  // namespace reprox::tok
