#include "engine/runtime/choice_emitter.hpp"

#include "common/json.hpp"

namespace reprox::engine {

ChoiceEmitter::ChoiceEmitter(std::shared_ptr<const tok::Tokenizer> tokenizer, uint32_t choice,
                             EmitterOptions options)
    : tokenizer_(tokenizer), choice_(choice), decoder_(tokenizer, options.skip_special),
      stop_(std::move(options.stop), options.include_stop), logprobs_(options.logprobs),
      token_ids_(options.token_ids) {}

namespace {

void write_token_fields(std::string& out, const std::string& text, float logprob) {
  out += "\"token\":";
  json::write_string(out, json::utf8_lossy(text));
  out += ",\"logprob\":";
  json::write_number(out, static_cast<double>(logprob));
  out += ",\"bytes\":[";
  for (size_t i = 0; i < text.size(); ++i) {
    if (i) out.push_back(',');
    json::write_int(out, static_cast<unsigned char>(text[i]));
  }
  out += "]";
}

}  // namespace

std::string ChoiceEmitter::token_name(int32_t id) const {
  return token_ids_ ? "token_id:" + std::to_string(id) : tokenizer_->decode({id}, false);
}

std::optional<GenEvent> ChoiceEmitter::token(int32_t id, const SampleResult& sample, bool* stopped,
                                             bool may_stop) {
  *stopped = false;
  if (logprobs_) {
    std::string entry = "{";
    write_token_fields(entry, token_name(id), sample.logprob);
    entry += ",\"top_logprobs\":[";
    for (size_t i = 0; i < sample.top_logprobs.size(); ++i) {
      if (i) entry.push_back(',');
      entry += "{";
      const auto& t = sample.top_logprobs[i];
      write_token_fields(entry, token_name(t.id), t.logprob);
      entry += "}";
    }
    entry += "]}";
    if (!pending_logprobs_.empty()) pending_logprobs_.push_back(',');
    pending_logprobs_ += entry;
  }
  auto out = stop_.feed(decoder_.push(id), may_stop);
  if (out.stopped) {
    *stopped = true;
    GenEvent e;
    e.choice = choice_;
    e.delta.content = std::move(out.text);
    e.delta.logprobs = std::move(pending_logprobs_);
    pending_logprobs_.clear();
    e.finish_reason = "stop";
    return e;
  }
  if (out.text.empty()) return std::nullopt;  // held back; logprobs wait with it
  GenEvent e;
  e.choice = choice_;
  e.delta.content = std::move(out.text);
  e.delta.logprobs = std::move(pending_logprobs_);
  pending_logprobs_.clear();
  return e;
}

GenEvent ChoiceEmitter::finish(const std::string& finish_reason) {
  GenEvent e;
  e.choice = choice_;
  std::string tail = decoder_.flush();
  auto out = stop_.feed(tail);
  e.delta.content = out.text;
  if (!out.stopped) e.delta.content += stop_.flush();
  e.delta.logprobs = std::move(pending_logprobs_);
  pending_logprobs_.clear();
  e.finish_reason = out.stopped ? "stop" : finish_reason;
  return e;
}

}  // namespace reprox::engine
