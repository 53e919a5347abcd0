#include "proxy/backend/chat_stream_decoder.hpp"

#include "common/json.hpp"

namespace reprox::backend {
namespace {

bool fail(std::string* error, std::string message) {
  if (error) *error = std::move(message);
  return false;
}

// Appends `"key":value` members of `object` except the excluded ones and
// null-valued ones (servers send e.g. "refusal":null, which carries nothing).
void append_extra_members(const json::Value& object, std::string& extra) {
  for (const auto& [key, value] : object.as_object()) {
    if (key == "role" || key == "content" || value.is_null()) continue;
    if (!extra.empty()) extra.push_back(',');
    json::write_string(extra, key);
    extra.push_back(':');
    json::dump(value, extra);
  }
}

// choices[i].logprobs.content elements, comma-joined without brackets.
void append_logprobs(const json::Value& choice, std::string& logprobs) {
  const json::Value* lp = choice.find("logprobs");
  if (!lp || !lp->is_object()) return;
  const json::Value* content = lp->find("content");
  if (!content || !content->is_array()) return;
  for (const auto& token : content->as_array()) {
    if (!logprobs.empty()) logprobs.push_back(',');
    json::dump(token, logprobs);
  }
}

int64_t int_member(const json::Value& object, std::string_view key) {
  const json::Value* v = object.find(key);
  return v && v->is_number() ? v->as_int() : 0;
}

std::string in_stream_error_message(const json::Value& err) {
  if (err.is_string()) return err.as_string();
  const json::Value* message = err.find("message");
  if (message && message->is_string()) return message->as_string();
  return json::dump(err);
}

}  // namespace

ChatStreamDecoder::ChatStreamDecoder(uint32_t n_choices)
    : finished_(n_choices, false), unfinished_(n_choices) {}

uint32_t ChatStreamDecoder::first_unfinished() const {
  for (uint32_t i = 0; i < finished_.size(); ++i)
    if (!finished_[i]) return i;
  return static_cast<uint32_t>(finished_.size());
}

bool ChatStreamDecoder::apply_chunk(std::string_view data, std::vector<GenEvent>& out,
                                    std::string* error) {
  json::Value chunk;
  if (auto perr = json::parse(data, chunk); perr)
    return fail(error, "upstream sent a chunk that is not valid JSON: " + perr.message);
  if (!chunk.is_object()) return fail(error, "upstream sent a chunk that is not a JSON object");
  if (const json::Value* err = chunk.find("error"); err && !err->is_null())
    return fail(error, "upstream reported an error mid-stream: " + in_stream_error_message(*err));

  if (const json::Value* fp = chunk.find("system_fingerprint"); fp && fp->is_string())
    fingerprint_ = fp->as_string();
  if (const json::Value* usage = chunk.find("usage"); usage && usage->is_object()) {
    usage_.prompt_tokens = int_member(*usage, "prompt_tokens");
    usage_.completion_tokens = int_member(*usage, "completion_tokens");
    const json::Value* details = usage->find("prompt_tokens_details");
    usage_.cached_tokens = details && details->is_object() ? int_member(*details, "cached_tokens") : 0;
    has_usage_ = true;
  }

  const json::Value* choices = chunk.find("choices");
  if (!choices || choices->is_null()) return true;
  if (!choices->is_array()) return fail(error, "upstream chunk has a non-array \"choices\"");
  for (const auto& choice : choices->as_array()) {
    if (!choice.is_object()) return fail(error, "upstream chunk has a non-object choice");
    const json::Value* index = choice.find("index");
    uint64_t i = index && index->is_integer() ? index->as_uint() : 0;
    if (index && !index->is_integer()) return fail(error, "upstream choice has a non-integer index");
    if (i >= finished_.size())
      return fail(error, "upstream sent choice index " + std::to_string(i) + " but n is " +
                             std::to_string(finished_.size()));
    GenEvent ev;
    ev.choice = static_cast<uint32_t>(i);
    if (const json::Value* delta = choice.find("delta"); delta && delta->is_object()) {
      if (const json::Value* content = delta->find("content"); content && !content->is_null()) {
        if (!content->is_string()) return fail(error, "upstream delta content is not a string");
        ev.delta.content = content->as_string();
      }
      append_extra_members(*delta, ev.delta.extra);
    }
    append_logprobs(choice, ev.delta.logprobs);
    if (const json::Value* fr = choice.find("finish_reason"); fr && fr->is_string())
      ev.finish_reason = fr->as_string();

    bool carries = !ev.delta.content.empty() || !ev.delta.extra.empty() ||
                   !ev.delta.logprobs.empty() || !ev.finish_reason.empty();
    if (!carries) continue;  // e.g. the role-only first chunk
    if (finished_[i])
      return fail(error, "upstream sent more output for choice " + std::to_string(i) +
                             " after it finished");
    if (!ev.finish_reason.empty()) {
      finished_[i] = true;
      --unfinished_;
    }
    out.push_back(std::move(ev));
  }
  return true;
}

bool ChatStreamDecoder::apply_full_response(std::string_view body, std::vector<GenEvent>& out,
                                            std::string* error) {
  json::Value response;
  if (auto perr = json::parse(body, response); perr)
    return fail(error, "upstream response is not valid JSON: " + perr.message);
  if (!response.is_object()) return fail(error, "upstream response is not a JSON object");
  const json::Value* choices = response.find("choices");
  if (!choices || !choices->is_array())
    return fail(error, "upstream response has no \"choices\" array");

  // Rewrite as one stream chunk whose choices carry the whole message as a
  // delta, so both paths share one set of rules.
  json::Array as_deltas;
  for (const auto& choice : choices->as_array()) {
    if (!choice.is_object()) return fail(error, "upstream response has a non-object choice");
    json::Value c = choice;
    if (const json::Value* message = choice.find("message")) c.set("delta", *message);
    as_deltas.push_back(std::move(c));
  }
  json::Value chunk = response;
  chunk.set("choices", json::Value(std::move(as_deltas)));
  return apply_chunk(json::dump(chunk), out, error);
}

}  // namespace reprox::backend
