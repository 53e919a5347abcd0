#include "proxy/api/chat_request_parser.hpp"

#include <algorithm>
#include <string>

#include "proxy/api/message_parser.hpp"
#include "proxy/api/request_checks.hpp"

namespace reprox::api {
namespace {

using checks::Check;

constexpr int64_t kMaxInt = INT64_MAX;

Check read_model(const json::Value& body, ChatRequest& req) {
  std::optional<std::string> model;
  if (auto e = checks::read_string(body, "model", "model", model)) return e;
  req.model = model.value_or("");
  return std::nullopt;
}

// Any integer in [-2^63, 2^64); negatives wrap to their two's-complement uint64.
Check read_seed(const json::Value& body, ChatRequest& req) {
  const json::Value* v = checks::present(body, "seed");
  if (!v) return std::nullopt;
  if (!v->is_number() || !v->is_integer()) return checks::wrong_type("seed", "an integer", *v);
  using T = json::Value::Type;
  if (v->type() == T::Uint) {
    req.seed = v->as_uint();
  } else if (v->type() == T::Int) {
    req.seed = static_cast<uint64_t>(v->as_int());
  } else {
    double d = v->as_double();
    if (!(d >= -9223372036854775808.0 && d < 18446744073709551616.0))
      return checks::bad_value("seed", "expected an integer in [-9223372036854775808, 18446744073709551615].");
    req.seed = d < 0 ? static_cast<uint64_t>(static_cast<int64_t>(d)) : static_cast<uint64_t>(d);
  }
  return std::nullopt;
}

Check read_sampling(const json::Value& body, ChatRequest& req) {
  if (auto e = checks::read_number(body, "temperature", "temperature", 0, 2, req.temperature)) return e;
  if (auto e = checks::read_number(body, "top_p", "top_p", 0, 1, req.top_p)) return e;
  if (auto e = checks::read_number(body, "presence_penalty", "presence_penalty", -2, 2, req.presence_penalty))
    return e;
  if (auto e = checks::read_number(body, "frequency_penalty", "frequency_penalty", -2, 2, req.frequency_penalty))
    return e;
  if (auto e = checks::read_number(body, "min_p", "min_p", 0, 1, req.min_p)) return e;
  if (auto e = checks::read_number(body, "repetition_penalty", "repetition_penalty", 0, 10, req.repetition_penalty))
    return e;
  if (req.repetition_penalty == 0)
    return checks::bad_value("repetition_penalty", "expected a number greater than 0 and at most 10, but got 0 instead.");
  std::optional<int64_t> i;
  if (auto e = checks::read_integer(body, "top_k", "top_k", 0, kMaxInt, i)) return e;
  req.top_k = i.value_or(0);
  i.reset();
  if (auto e = checks::read_integer(body, "n", "n", 1, 128, i)) return e;
  req.n = i.value_or(1);
  std::optional<int64_t> max_tokens, max_completion_tokens;
  if (auto e = checks::read_integer(body, "max_tokens", "max_tokens", 1, kMaxInt, max_tokens)) return e;
  if (auto e = checks::read_integer(body, "max_completion_tokens", "max_completion_tokens", 1, kMaxInt,
                                    max_completion_tokens))
    return e;
  req.max_tokens = max_completion_tokens ? max_completion_tokens : max_tokens;
  return read_seed(body, req);
}

Check read_stop(const json::Value& body, ChatRequest& req) {
  const json::Value* v = checks::present(body, "stop");
  if (!v) return std::nullopt;
  if (v->is_string()) {
    req.stop = {v->as_string()};
    return std::nullopt;
  }
  if (!v->is_array()) return checks::wrong_type("stop", "a string or an array of strings", *v);
  const auto& list = v->as_array();
  if (list.size() > 4)
    return checks::bad_value("stop", "expected at most 4 stop sequences, but got " + std::to_string(list.size()) + ".");
  for (const auto& s : list) {
    if (!s.is_string()) return checks::wrong_type("stop", "a string or an array of strings", s);
    req.stop.push_back(s.as_string());
  }
  return std::nullopt;
}

// A boolean field; `fallback` when absent or null.
Check read_flag(const json::Value& body, const char* name, bool fallback, bool& out) {
  std::optional<bool> flag;
  if (auto e = checks::read_bool(body, name, name, flag)) return e;
  out = flag.value_or(fallback);
  return std::nullopt;
}

// An array of token ids (integers in [0, 2^31)), sorted and unique; `out`
// untouched when absent.
Check read_token_ids(const json::Value& body, const char* name, std::vector<int64_t>& out) {
  const json::Value* ids = checks::present(body, name);
  if (!ids) return std::nullopt;
  if (!ids->is_array()) return checks::wrong_type(name, "an array of token ids", *ids);
  for (const auto& id : ids->as_array()) {
    const std::optional<int64_t> value = checks::integral_int64(id);
    if (!value || *value < 0 || *value > INT32_MAX)
      return checks::bad_value(name,
                               "expected token ids (integers from 0 to 2147483647), but got " + json::dump(id) + ".");
    out.push_back(*value);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return std::nullopt;
}

// vLLM's allowed_token_ids, bad_words, truncate_prompt_tokens and
// return_tokens_as_token_ids.
Check read_token_options(const json::Value& body, ChatRequest& req) {
  std::optional<int64_t> truncate;
  if (auto e = checks::read_integer(body, "truncate_prompt_tokens", "truncate_prompt_tokens", -1, kMaxInt, truncate))
    return e;
  if (truncate == 0)
    return checks::bad_value("truncate_prompt_tokens", "expected -1 or a count of at least 1, but got 0.");
  req.truncate_prompt_tokens = truncate;
  if (auto e = read_flag(body, "return_tokens_as_token_ids", false, req.return_tokens_as_token_ids)) return e;
  if (auto e = read_token_ids(body, "allowed_token_ids", req.allowed_token_ids)) return e;
  const json::Value* words = checks::present(body, "bad_words");
  if (!words) return std::nullopt;
  if (!words->is_array()) return checks::wrong_type("bad_words", "an array of strings", *words);
  for (const auto& word : words->as_array()) {
    if (!word.is_string()) return checks::wrong_type("bad_words", "an array of strings", word);
    if (word.as_string().find_first_not_of(" \t\n\r") == std::string::npos)
      return checks::bad_value("bad_words", "entries must not be empty or only spaces.");
    req.bad_words.push_back(word.as_string());
  }
  std::sort(req.bad_words.begin(), req.bad_words.end());
  req.bad_words.erase(std::unique(req.bad_words.begin(), req.bad_words.end()), req.bad_words.end());
  return std::nullopt;
}

// vLLM's extensions on how a choice ends. Needs read_sampling first (max_tokens).
Check read_stop_controls(const json::Value& body, ChatRequest& req) {
  std::optional<int64_t> min_tokens;
  if (auto e = checks::read_integer(body, "min_tokens", "min_tokens", 0, kMaxInt, min_tokens)) return e;
  req.min_tokens = min_tokens.value_or(0);
  if (req.max_tokens && req.min_tokens > *req.max_tokens)
    return checks::bad_value("min_tokens", "must be at most max_tokens (" + std::to_string(*req.max_tokens) +
                                               "), but got " + std::to_string(req.min_tokens) + ".");
  if (auto e = read_flag(body, "ignore_eos", false, req.ignore_eos)) return e;
  if (auto e = read_flag(body, "include_stop_str_in_output", false, req.include_stop_str_in_output)) return e;
  if (auto e = read_flag(body, "skip_special_tokens", true, req.skip_special_tokens)) return e;
  return read_token_ids(body, "stop_token_ids", req.stop_token_ids);
}

// Token ids are non-empty decimal digit strings.
std::optional<int64_t> token_id(const std::string& s) {
  if (s.empty() || s.size() > 18) return std::nullopt;
  int64_t id = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    id = id * 10 + (c - '0');
  }
  return id;
}

Check read_logit_bias(const json::Value& body, ChatRequest& req) {
  const json::Value* v = checks::present(body, "logit_bias");
  if (!v) return std::nullopt;
  if (!v->is_object()) return checks::wrong_type("logit_bias", "an object", *v);
  for (const auto& [k, bias] : v->as_object()) {
    auto id = token_id(k);
    if (!id) return checks::bad_value("logit_bias", "key '" + k + "' is not a token id (a decimal integer string).");
    if (!bias.is_number()) return checks::wrong_type("logit_bias", "numbers as values", bias);
    double b = bias.as_double();
    if (!(b >= -100 && b <= 100))
      return checks::bad_value("logit_bias", "bias for token " + k + " must be in [-100, 100], but got " +
                                                 checks::number_text(b) + ".");
    auto same = std::find_if(req.logit_bias.begin(), req.logit_bias.end(), [&](auto& p) { return p.first == *id; });
    if (same != req.logit_bias.end())
      same->second = b;  // "7" and "07" name one token: last wins, as duplicate keys do
    else
      req.logit_bias.emplace_back(*id, b);
  }
  std::sort(req.logit_bias.begin(), req.logit_bias.end());
  return std::nullopt;
}

Check read_logprobs(const json::Value& body, ChatRequest& req) {
  if (auto e = read_flag(body, "logprobs", false, req.logprobs)) return e;
  std::optional<int64_t> top;
  if (auto e = checks::read_integer(body, "top_logprobs", "top_logprobs", 0, 20, top)) return e;
  if (top && !req.logprobs) return checks::bad_value("top_logprobs", "requires 'logprobs' to be true.");
  req.top_logprobs = top.value_or(0);
  return std::nullopt;
}

Check read_stream(const json::Value& body, ChatRequest& req) {
  if (auto e = read_flag(body, "stream", false, req.stream)) return e;
  const json::Value* opts = checks::present(body, "stream_options");
  if (!opts) return std::nullopt;
  if (!opts->is_object()) return checks::wrong_type("stream_options", "an object", *opts);
  if (!req.stream) return checks::bad_value("stream_options", "only allowed when 'stream' is true.");
  std::optional<bool> usage;
  if (auto e = checks::read_bool(*opts, "include_usage", "stream_options.include_usage", usage)) return e;
  req.include_usage = usage.value_or(false);
  return std::nullopt;
}

Check check_function_def(const json::Value& fn, const std::string& param) {
  if (!fn.is_object()) return checks::wrong_type(param, "an object", fn);
  const json::Value* name = checks::present(fn, "name");
  if (!name) return checks::missing(param + ".name");
  if (!name->is_string()) return checks::wrong_type(param + ".name", "a string", *name);
  const json::Value* params = checks::present(fn, "parameters");
  if (params && !params->is_object()) return checks::wrong_type(param + ".parameters", "an object", *params);
  return std::nullopt;
}

Check read_tools(const json::Value& body, ChatRequest& req) {
  if (const json::Value* tools = checks::present(body, "tools")) {
    if (!tools->is_array()) return checks::wrong_type("tools", "an array", *tools);
    if (tools->as_array().empty()) return checks::bad_value("tools", "empty array. Expected at least one tool.");
    for (size_t i = 0; i < tools->as_array().size(); ++i) {
      const json::Value& tool = tools->as_array()[i];
      std::string p = "tools[" + std::to_string(i) + "]";
      if (!tool.is_object()) return checks::wrong_type(p, "an object", tool);
      const json::Value* type = checks::present(tool, "type");
      if (!type || !type->is_string() || type->as_string() != "function")
        return checks::bad_value(p + ".type", "expected 'function'.");
      const json::Value* fn = checks::present(tool, "function");
      if (!fn) return checks::missing(p + ".function");
      if (auto e = check_function_def(*fn, p + ".function")) return e;
    }
    req.tools = *tools;
  }
  if (const json::Value* choice = checks::present(body, "tool_choice")) {
    if (choice->is_string()) {
      const auto& s = choice->as_string();
      if (s != "none" && s != "auto" && s != "required")
        return checks::bad_value("tool_choice", "expected 'none', 'auto', 'required' or an object.");
    } else if (!choice->is_object()) {
      return checks::wrong_type("tool_choice", "a string or an object", *choice);
    }
    req.tool_choice = *choice;
  }
  return std::nullopt;
}

// Legacy `functions` / `function_call`: validated here, keyed from `raw`.
Check check_legacy_functions(const json::Value& body) {
  if (const json::Value* fns = checks::present(body, "functions")) {
    if (!fns->is_array()) return checks::wrong_type("functions", "an array", *fns);
    for (size_t i = 0; i < fns->as_array().size(); ++i)
      if (auto e = check_function_def(fns->as_array()[i], "functions[" + std::to_string(i) + "]")) return e;
  }
  if (const json::Value* fc = checks::present(body, "function_call")) {
    if (fc->is_string()) {
      if (fc->as_string() != "none" && fc->as_string() != "auto")
        return checks::bad_value("function_call", "expected 'none', 'auto' or an object.");
    } else if (!fc->is_object()) {
      return checks::wrong_type("function_call", "a string or an object", *fc);
    }
  }
  return std::nullopt;
}

Check read_response_format(const json::Value& body, ChatRequest& req) {
  const json::Value* rf = checks::present(body, "response_format");
  if (!rf) return std::nullopt;
  if (!rf->is_object()) return checks::wrong_type("response_format", "an object", *rf);
  const json::Value* type = checks::present(*rf, "type");
  if (!type) return checks::missing("response_format.type");
  if (!type->is_string()) return checks::wrong_type("response_format.type", "a string", *type);
  const auto& t = type->as_string();
  if (t != "text" && t != "json_object" && t != "json_schema")
    return checks::bad_value("response_format.type", "expected 'text', 'json_object' or 'json_schema'.");
  if (t == "json_schema") {
    const json::Value* schema = checks::present(*rf, "json_schema");
    if (!schema) return checks::missing("response_format.json_schema");
    if (!schema->is_object()) return checks::wrong_type("response_format.json_schema", "an object", *schema);
  }
  req.response_format = *rf;
  return std::nullopt;
}

// vLLM's guided_choice: the answer is one of these strings. Needs
// read_response_format first.
Check read_guided_choice(const json::Value& body, ChatRequest& req) {
  const json::Value* choices = checks::present(body, "guided_choice");
  if (!choices) return std::nullopt;
  if (!choices->is_array()) return checks::wrong_type("guided_choice", "an array of strings", *choices);
  if (choices->as_array().empty()) return checks::bad_value("guided_choice", "expected at least one choice.");
  for (const auto& choice : choices->as_array()) {
    if (!choice.is_string()) return checks::wrong_type("guided_choice", "an array of strings", choice);
    if (choice.as_string().empty()) return checks::bad_value("guided_choice", "choices must not be empty.");
    req.guided_choice.push_back(choice.as_string());
  }
  std::sort(req.guided_choice.begin(), req.guided_choice.end());
  req.guided_choice.erase(std::unique(req.guided_choice.begin(), req.guided_choice.end()), req.guided_choice.end());
  if (const json::Value* type = req.response_format.find("type"); type && type->as_string() != "text")
    return checks::bad_value("guided_choice", "cannot be combined with a response_format of type '" +
                                                  type->as_string() + "'.");
  return std::nullopt;
}

// chat_template_kwargs, add_generation_prompt, continue_final_message.
Check read_template_options(const json::Value& body, ChatRequest& req) {
  if (auto e = read_flag(body, "add_generation_prompt", true, req.add_generation_prompt)) return e;
  if (auto e = read_flag(body, "continue_final_message", false, req.continue_final_message)) return e;
  if (req.continue_final_message && req.add_generation_prompt)
    return checks::bad_value("continue_final_message",
                             "cannot be true while add_generation_prompt is true (its default); set "
                             "add_generation_prompt to false.");
  const json::Value* kwargs = checks::present(body, "chat_template_kwargs");
  if (!kwargs) return std::nullopt;
  if (auto e = check_template_kwargs(*kwargs, "chat_template_kwargs")) return e;
  req.chat_template_kwargs = *kwargs;
  return std::nullopt;
}

// Both spellings (`no-cache` / `no_cache`) count; either being true sets the flag.
Check read_cache_flag(const json::Value& cache, std::string_view dash, std::string_view underscore, bool& out) {
  for (std::string_view key : {dash, underscore}) {
    std::optional<bool> flag;
    if (auto e = checks::read_bool(cache, key, "cache." + std::string(key), flag)) return e;
    out = out || flag.value_or(false);
  }
  return std::nullopt;
}

Check read_cache(const json::Value& body, ChatRequest& req) {
  const json::Value* cache = checks::present(body, "cache");
  if (!cache) return std::nullopt;
  if (!cache->is_object()) return checks::wrong_type("cache", "an object", *cache);
  if (auto e = read_cache_flag(*cache, "no-cache", "no_cache", req.cache.no_cache)) return e;
  if (auto e = read_cache_flag(*cache, "no-store", "no_store", req.cache.no_store)) return e;
  if (auto e = checks::read_integer(*cache, "ttl", "cache.ttl", 0, kMaxInt, req.cache.ttl_seconds)) return e;
  std::optional<bool> near;
  if (auto e = checks::read_bool(*cache, "near", "cache.near", near)) return e;
  req.cache.near = near.value_or(true);
  return checks::read_string(*cache, "namespace", "cache.namespace", req.cache.ns);
}

Check read_other(const json::Value& body, ChatRequest& req) {
  std::optional<std::string> user;
  if (auto e = checks::read_string(body, "user", "user", user)) return e;
  req.user = user.value_or("");
  const json::Value* metadata = checks::present(body, "metadata");
  if (metadata && !metadata->is_object()) return checks::wrong_type("metadata", "an object", *metadata);
  std::optional<bool> store;
  return checks::read_bool(body, "store", "store", store);
}

}  // namespace

ParseResult parse_chat_request(std::string_view body) {
  ParseResult result;
  if (!json::valid_utf8(body)) {
    result.error = ApiError::invalid("", "The request body is not valid UTF-8.");
    return result;
  }
  json::Value root;
  if (auto err = json::parse(body, root)) {
    result.error = ApiError::invalid(
        "", "We could not parse the JSON body of your request (" + err.message +
                "). The OpenAI API expects a JSON payload.");
    return result;
  }
  if (!root.is_object()) {
    result.error = ApiError::invalid("", "The request body must be a JSON object, but got " +
                                             checks::type_name(root) + ".");
    return result;
  }

  ChatRequest req;
  const json::Value* messages = checks::present(root, "messages");
  Check error;
  if (!messages) {
    error = checks::missing("messages");
  } else if (!(error = read_model(root, req)) && !(error = parse_messages(*messages, req.messages)) &&
             !(error = read_sampling(root, req)) && !(error = read_stop(root, req)) &&
             !(error = read_stop_controls(root, req)) && !(error = read_token_options(root, req)) &&
             !(error = read_logit_bias(root, req)) && !(error = read_logprobs(root, req)) &&
             !(error = read_stream(root, req)) && !(error = read_tools(root, req)) &&
             !(error = check_legacy_functions(root)) && !(error = read_response_format(root, req)) &&
             !(error = read_guided_choice(root, req)) &&
             !(error = read_template_options(root, req)) && !(error = read_cache(root, req)) &&
             !(error = read_other(root, req))) {
    req.raw = std::move(root);
    result.request = std::move(req);
    return result;
  }
  result.error = std::move(*error);
  return result;
}

}  // namespace reprox::api
