#include "engine/template/chat_template.hpp"

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "engine/template/evaluator.hpp"
#include "engine/template/parser.hpp"

namespace reprox::tmpl {

struct CompiledBody {
  Body root;
};

ChatTemplate::ChatTemplate() = default;
ChatTemplate::~ChatTemplate() = default;

std::shared_ptr<const ChatTemplate> ChatTemplate::compile(const std::string& source) {
  std::shared_ptr<ChatTemplate> t(new ChatTemplate());
  t->body_ = std::make_unique<CompiledBody>();
  t->body_->root = parse_template(source);
  return t;
}

namespace {

std::string token_text(const json::Value* v, const std::string& field) {
  if (!v || v->is_null()) return "";
  if (v->is_string()) return v->as_string();
  if (v->is_object()) {
    const json::Value* c = v->find("content");
    if (c && c->is_string()) return c->as_string();
  }
  throw std::runtime_error("tokenizer_config.json: " + field + " is neither a string nor an object with a string 'content'");
}

}  // namespace

std::shared_ptr<const ChatTemplate> ChatTemplate::load_from_tokenizer_config(const std::string& path,
                                                                             std::string* bos_token,
                                                                             std::string* eos_token) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  json::Value cfg;
  if (auto err = json::parse(ss.str(), cfg)) throw std::runtime_error(path + ": invalid JSON: " + err.message);
  if (!cfg.is_object()) throw std::runtime_error(path + ": not a JSON object");
  const json::Value* tmpl = cfg.find("chat_template");
  if (!tmpl || tmpl->is_null()) throw std::runtime_error(path + ": no chat_template");
  std::string source;
  if (tmpl->is_string()) {
    source = tmpl->as_string();
  } else if (tmpl->is_array()) {
    bool found = false;
    for (const auto& entry : tmpl->as_array()) {
      const json::Value* name = entry.find("name");
      const json::Value* body = entry.find("template");
      if (name && name->is_string() && name->as_string() == "default" && body && body->is_string()) {
        source = body->as_string();
        found = true;
      }
    }
    if (!found) throw std::runtime_error(path + ": chat_template list has no \"default\" entry");
  } else {
    throw std::runtime_error(path + ": chat_template is neither a string nor a list");
  }
  if (bos_token) *bos_token = token_text(cfg.find("bos_token"), "bos_token");
  if (eos_token) *eos_token = token_text(cfg.find("eos_token"), "eos_token");
  try {
    return compile(source);
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(path + ": chat_template: " + e.what());
  }
}

std::variant<std::string, RenderError> ChatTemplate::render(const json::Value& context,
                                                            const RenderLimits& limits) const {
  if (!context.is_object()) return RenderError{"template context must be a JSON object", false};
  Value ctx = Value::from_json(context);
  std::string out;
  Fault fault;
  if (!evaluate(body_->root, ctx, limits, out, fault)) return RenderError{fault.message, fault.raised};
  return out;
}

}  // namespace reprox::tmpl
