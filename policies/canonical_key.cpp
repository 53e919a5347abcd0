#include "policies/canonical_key.hpp"

#include <algorithm>

#include "policies/tenant.hpp"
#include "common/json.hpp"

namespace reprox::policy {
namespace {

json::Value canonical_message(const api::ChatMessage& m) {
  json::Object out;
  out.emplace_back("role", m.role);
  if (!m.content.is_null()) out.emplace_back("content", m.content);
  if (m.name) out.emplace_back("name", *m.name);
  if (!m.tool_calls.is_null()) out.emplace_back("tool_calls", m.tool_calls);
  if (m.tool_call_id) out.emplace_back("tool_call_id", *m.tool_call_id);
  if (!m.function_call.is_null()) out.emplace_back("function_call", m.function_call);
  return json::Value(std::move(out));
}

json::Value canonical_stop(std::vector<std::string> stop) {
  std::sort(stop.begin(), stop.end());
  stop.erase(std::unique(stop.begin(), stop.end()), stop.end());
  json::Array out;
  for (auto& s : stop) out.emplace_back(std::move(s));
  return json::Value(std::move(out));
}

json::Value canonical_logit_bias(const std::vector<std::pair<int64_t, double>>& bias) {
  json::Object out;  // ids are unique after parsing; dump sorts the keys
  for (const auto& [id, b] : bias) out.emplace_back(std::to_string(id), b);
  return json::Value(std::move(out));
}

void add_if_present(json::Object& out, const char* name, const json::Value& v) {
  if (v.is_null()) return;
  out.emplace_back(name, v);
}

// The top-level members of the body that the key holds by name, or that
// never change the answer, or that it holds as the effective value
// (max_completion_tokens as max_tokens, seed as the effective seed).
bool keyed_by_name(const std::string& member) {
  static const char* const names[] = {
      "model",           "messages",        "temperature",       "top_p",          "top_k",
      "seed",            "n",               "max_tokens",        "max_completion_tokens",
      "stop",            "presence_penalty", "frequency_penalty", "logit_bias",     "logprobs",
      "top_logprobs",    "tools",           "tool_choice",       "response_format", "functions",
      "function_call",   "stream",          "stream_options",    "user",           "metadata",
      "store",           "cache",           "chat_template_kwargs", "min_p",       "repetition_penalty",
      "min_tokens",      "ignore_eos",      "stop_token_ids",    "include_stop_str_in_output", "skip_special_tokens",
      "add_generation_prompt", "continue_final_message", "allowed_token_ids", "bad_words",
      "truncate_prompt_tokens", "return_tokens_as_token_ids", "guided_choice", "guided_json"};
  for (const char* name : names) {
    if (member == name) return true;
  }
  return false;
}

// The body members keyed_by_name() does not cover; null when none.
json::Value other_fields(const json::Value& raw) {
  if (!raw.is_object()) return json::Value();
  json::Object out;
  for (const auto& [name, value] : raw.as_object()) {
    if (!keyed_by_name(name)) out.emplace_back(name, value);
  }
  return out.empty() ? json::Value() : json::Value(std::move(out));
}

}  // namespace

int64_t effective_max_tokens(const api::ChatRequest& request, int64_t backend_default) {
  return request.max_tokens.value_or(backend_default);
}

KeyResult make_key(const api::ChatRequest& request, const KeyContext& context) {
  KeyResult result;
  result.seed_injected = !request.seed.has_value();
  result.seed = request.seed.value_or(context.default_seed);

  json::Object c;
  c.emplace_back("v", kKeyVersion);
  c.emplace_back("model", context.model_id);
  c.emplace_back("fp", context.fingerprint);
  c.emplace_back("tenant", context.tenant);
  c.emplace_back("ns", context.ns);
  if (!context.sampling_mode.empty()) c.emplace_back("mode", context.sampling_mode);

  json::Array messages;
  messages.reserve(request.messages.size());
  for (const auto& m : request.messages) messages.push_back(canonical_message(m));
  c.emplace_back("messages", json::Value(std::move(messages)));

  c.emplace_back("temperature", request.temperature);
  if (request.temperature != 0) {  // greedy decoding ignores them
    c.emplace_back("top_p", request.top_p);
    c.emplace_back("top_k", request.top_k);
    c.emplace_back("seed", result.seed);
    // vLLM's extension, only when on: keys without it are unchanged.
    if (request.min_p != 0.0) c.emplace_back("min_p", request.min_p);
  }
  c.emplace_back("n", request.n);
  c.emplace_back("max_tokens", context.effective_max_tokens);
  c.emplace_back("stop", canonical_stop(request.stop));
  c.emplace_back("presence_penalty", request.presence_penalty);
  c.emplace_back("frequency_penalty", request.frequency_penalty);
  c.emplace_back("logit_bias", canonical_logit_bias(request.logit_bias));
  c.emplace_back("logprobs", request.logprobs);
  c.emplace_back("top_logprobs", request.top_logprobs);
  // vLLM's extensions, only when on: keys without them are unchanged.
  if (request.repetition_penalty != 1.0) c.emplace_back("repetition_penalty", request.repetition_penalty);
  if (request.min_tokens != 0) c.emplace_back("min_tokens", request.min_tokens);
  if (request.ignore_eos) c.emplace_back("ignore_eos", true);
  // Sorted and unique, as the parser leaves them.
  if (!request.stop_token_ids.empty())
    c.emplace_back("stop_token_ids", json::Array(request.stop_token_ids.begin(), request.stop_token_ids.end()));
  if (!request.allowed_token_ids.empty())
    c.emplace_back("allowed_token_ids",
                   json::Array(request.allowed_token_ids.begin(), request.allowed_token_ids.end()));
  if (!request.bad_words.empty())
    c.emplace_back("bad_words", json::Array(request.bad_words.begin(), request.bad_words.end()));
  if (request.include_stop_str_in_output) c.emplace_back("include_stop_str_in_output", true);
  if (!request.skip_special_tokens) c.emplace_back("skip_special_tokens", false);
  if (request.truncate_prompt_tokens) c.emplace_back("truncate_prompt_tokens", *request.truncate_prompt_tokens);
  if (request.return_tokens_as_token_ids) c.emplace_back("return_tokens_as_token_ids", true);
  if (!request.guided_choice.empty())  // sorted and unique: the order never changes the answer
    c.emplace_back("guided_choice", json::Array(request.guided_choice.begin(), request.guided_choice.end()));
  if (const json::Value* v = request.raw.find("guided_json")) add_if_present(c, "guided_json", *v);

  add_if_present(c, "tools", request.tools);
  add_if_present(c, "tool_choice", request.tool_choice);
  add_if_present(c, "response_format", request.response_format);
  // Legacy function calling changes the prompt as tools do; validated by the parser.
  if (const json::Value* v = request.raw.find("functions")) add_if_present(c, "functions", *v);
  if (const json::Value* v = request.raw.find("function_call")) add_if_present(c, "function_call", *v);
  // Template variables change the prompt (enable_thinking, say): keyed for
  // every backend.
  add_if_present(c, "chat_template_kwargs", request.chat_template_kwargs);
  if (!request.add_generation_prompt) c.emplace_back("add_generation_prompt", false);
  if (request.continue_final_message) c.emplace_back("continue_final_message", true);
  if (context.key_other_fields) add_if_present(c, "other", other_fields(request.raw));

  result.canonical = json::dump(json::Value(std::move(c)), /*sort_keys=*/true);
  result.key = sha256_hex(result.canonical);
  return result;
}

}  // namespace reprox::policy
