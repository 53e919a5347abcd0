#include "proxy/api/chat_response.hpp"

#include <charconv>
#include <chrono>
#include <cstring>
#include <map>
#include <random>
#include <utility>

#include "common/json.hpp"

namespace reprox::api {

std::string new_completion_id() {
  // 64 letters and digits (two of them twice), indexed by 6 random bits: an
  // id is unique, not a secret, and this costs a few instructions a digit.
  static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789ab";
  // splitmix64 over a per-thread state seeded once from the OS.
  thread_local uint64_t state = (uint64_t(std::random_device{}()) << 32) ^ std::random_device{}();
  auto next = [] {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  };
  char id[9 + 24] = {'c', 'h', 'a', 't', 'c', 'm', 'p', 'l', '-'};
  uint64_t bits = 0;
  for (int i = 0; i < 24; ++i) {
    if (i % 10 == 0) bits = next();  // 10 digits per 64 random bits
    id[9 + i] = alphabet[bits & 63];
    bits >>= 6;
  }
  return std::string(id, sizeof id);  // one allocation, not one per growth
}

ResponseMeta fresh_meta(const std::string& model, const std::string& system_fingerprint) {
  using namespace std::chrono;
  return ResponseMeta{new_completion_id(), unix_seconds_now(),
                      model, system_fingerprint};
}

namespace {

void write_head(std::string& out, const ResponseMeta& meta, const char* object) {
  out += "{\"id\":\"";
  out += meta.id;  // letters, digits and '-' only (new_completion_id): nothing to escape
  out += "\",\"object\":\"";
  out += object;
  out += "\",\"created\":";
  json::write_int(out, meta.created);
  out += ",\"model\":";
  json::write_string(out, meta.model);
  out += ",\"system_fingerprint\":";
  json::write_string(out, meta.system_fingerprint);
}

void write_finish(std::string& out, std::string_view finish_reason) {
  out += ",\"finish_reason\":";
  if (finish_reason.empty()) out += "null"; else json::write_string(out, finish_reason);
}

// Merges raw delta members ("\"tool_calls\":[...]") across a choice's events
// into the final message: strings concatenate, tool_calls merge by index with
// their function.arguments concatenated, anything else: last wins.
class ExtraMerger {
 public:
  void add(std::string_view members) {
    if (members.empty()) return;
    json::Value obj;
    std::string text;
    text.reserve(members.size() + 2);
    text.append("{").append(members).append("}");
    if (json::parse(text, obj) || !obj.is_object()) return;
    for (const auto& [k, v] : obj.as_object()) {
      if (k == "tool_calls" && v.is_array()) {
        for (const auto& call : v.as_array()) merge_tool_call(call);
        continue;
      }
      json::Value* slot = find(k);
      if (slot && slot->is_string() && v.is_string())
        *slot = json::Value(slot->as_string() + v.as_string());
      else if (slot)
        *slot = v;
      else
        fields_.emplace_back(k, v);
    }
  }
  bool has(std::string_view k) const { return find(k) != nullptr; }
  void write(std::string& out) const {
    for (const auto& [k, v] : fields_) {
      out.push_back(',');
      json::write_string(out, k);
      out.push_back(':');
      json::dump(v, out);
    }
    if (!calls_.empty()) {
      out += ",\"tool_calls\":[";
      bool first = true;
      for (const auto& [index, call] : calls_) {
        if (!first) out.push_back(',');
        first = false;
        json::dump(call, out);
      }
      out.push_back(']');
    }
  }

 private:
  const json::Value* find(std::string_view k) const {
    for (const auto& [name, v] : fields_)
      if (name == k) return &v;
    return nullptr;
  }
  json::Value* find(std::string_view k) { return const_cast<json::Value*>(std::as_const(*this).find(k)); }
  void merge_tool_call(const json::Value& call) {
    const json::Value* idx = call.find("index");
    int64_t index = idx && idx->is_integer() ? idx->as_int() : static_cast<int64_t>(calls_.size());
    auto& merged = calls_[index];
    if (!merged.is_object()) merged = json::Value(json::Object{});
    for (const auto& [k, v] : call.as_object()) {
      if (k == "index") continue;
      if (k == "function" && v.is_object()) {
        json::Value fn = merged.find("function") ? *merged.find("function") : json::Value(json::Object{});
        for (const auto& [fk, fv] : v.as_object()) {
          const json::Value* old = fn.find(fk);
          if (old && old->is_string() && fv.is_string())
            fn.set(fk, json::Value(old->as_string() + fv.as_string()));
          else
            fn.set(fk, fv);
        }
        merged.set("function", fn);
      } else {
        merged.set(k, v);
      }
    }
  }
  json::Object fields_;
  std::map<int64_t, json::Value> calls_;
};

}  // namespace

void write_usage(std::string& out, const Usage& usage) {
  out += "{\"prompt_tokens\":";
  json::write_int(out, usage.prompt_tokens);
  out += ",\"completion_tokens\":";
  json::write_int(out, usage.completion_tokens);
  out += ",\"total_tokens\":";
  json::write_int(out, usage.prompt_tokens + usage.completion_tokens);
  out += ",\"prompt_tokens_details\":{\"cached_tokens\":";
  json::write_int(out, usage.cached_tokens);
  out += "}}";
}

std::string render_completion(const ResponseMeta& meta, const Generation& gen) {
  return render_completion_from_tail(meta, render_completion_tail(gen));
}

std::string render_completion_from_tail(const ResponseMeta& meta, const std::string& tail) {
  std::string out;
  out.reserve(192 + meta.model.size() + meta.system_fingerprint.size() + tail.size());
  write_head(out, meta, "chat.completion");
  out += tail;
  return out;
}

std::string render_completion_suffix(const std::string& model, const std::string& fingerprint,
                                     const std::string& tail) {
  std::string out;
  out.reserve(48 + model.size() + fingerprint.size() + tail.size());
  out += ",\"model\":";
  json::write_string(out, model);
  out += ",\"system_fingerprint\":";
  json::write_string(out, fingerprint);
  out += tail;
  return out;
}

std::string render_completion_from_suffix(std::string_view id, int64_t created, const std::string& suffix) {
  static constexpr std::string_view kOpen = "{\"id\":\"", kObject = "\",\"object\":\"chat.completion\",\"created\":";
  char number[24];
  const size_t digits = size_t(std::to_chars(number, number + sizeof number, created).ptr - number);
  std::string out(kOpen.size() + id.size() + kObject.size() + digits + suffix.size(), '\0');
  char* p = out.data();
  for (std::string_view part : {kOpen, id, kObject, std::string_view(number, digits), std::string_view(suffix)}) {
    std::memcpy(p, part.data(), part.size());
    p += part.size();
  }
  return out;
}

int64_t unix_seconds_now() {
  using namespace std::chrono;
  return duration_cast<seconds>(system_clock::now().time_since_epoch()).count();
}

std::string render_completion_tail(const Generation& gen) {
  return render_completion_tail(gen.n_choices, gen.usage, [&gen](const std::function<void(const EventView&)>& fn) {
    for (const auto& e : gen.events) fn(view_of(e));
  });
}

std::string render_completion_tail(uint32_t n_choices, const Usage& usage, const EventWalk& for_each_event) {
  struct ChoiceText {
    std::string content, logprobs;
    std::string_view finish_reason;  // views the caller's events, which outlive this call
    bool has_logprobs = false;
    ExtraMerger extra;
  };
  std::vector<ChoiceText> choices(n_choices);
  size_t bytes = 0;
  for_each_event([&](const EventView& e) {
    if (e.choice >= choices.size()) return;
    auto& c = choices[e.choice];
    c.content += e.content;
    if (!e.logprobs.empty()) {
      if (c.has_logprobs) c.logprobs.push_back(',');
      c.logprobs += e.logprobs;
      c.has_logprobs = true;
    }
    c.extra.add(e.extra);
    if (!e.finish_reason.empty()) c.finish_reason = e.finish_reason;
    bytes += e.content.size() + e.logprobs.size() + e.extra.size();
  });
  std::string out;
  out.reserve(160 + 128 * choices.size() + bytes + bytes / 8);
  out += ",\"choices\":[";
  for (size_t i = 0; i < choices.size(); ++i) {
    const auto& c = choices[i];
    if (i) out.push_back(',');
    out += "{\"index\":";
    json::write_int(out, static_cast<int64_t>(i));
    out += ",\"message\":{\"role\":\"assistant\",\"content\":";
    json::write_string(out, c.content);
    // Required (nullable) in OpenAI's message schema; an upstream's own
    // refusal text, kept among the extra members, takes its place.
    if (!c.extra.has("refusal")) out += ",\"refusal\":null";
    c.extra.write(out);
    out += "},\"logprobs\":";
    if (c.has_logprobs) {
      out += "{\"content\":[";
      out += c.logprobs;
      out += "],\"refusal\":null}";
    } else {
      out += "null";
    }
    write_finish(out, c.finish_reason);
    out += "}";
  }
  out += "],\"usage\":";
  write_usage(out, usage);
  out += "}";
  return out;
}

void render_chunk(std::string& out, const ResponseMeta& meta, const GenEvent& event, bool first_of_choice) {
  out += "data: ";
  write_head(out, meta, "chat.completion.chunk");
  out += ",\"choices\":[{\"index\":";
  json::write_int(out, event.choice);
  out += ",\"delta\":{";
  bool any = false;
  if (first_of_choice) {
    out += "\"role\":\"assistant\"";
    any = true;
  }
  if (!event.delta.content.empty() || first_of_choice) {
    if (any) out.push_back(',');
    out += "\"content\":";
    json::write_string(out, event.delta.content);
    any = true;
  }
  if (!event.delta.extra.empty()) {
    if (any) out.push_back(',');
    out += event.delta.extra;
  }
  out += "},\"logprobs\":";
  if (!event.delta.logprobs.empty()) {
    out += "{\"content\":[";
    out += event.delta.logprobs;
    out += "],\"refusal\":null}";
  } else {
    out += "null";
  }
  write_finish(out, event.finish_reason);
  out += "}]}\n\n";
}

void render_usage_chunk(std::string& out, const ResponseMeta& meta, const Usage& usage) {
  out += "data: ";
  write_head(out, meta, "chat.completion.chunk");
  out += ",\"choices\":[],\"usage\":";
  write_usage(out, usage);
  out += "}\n\n";
}

void render_error_event(std::string& out, const std::string& error_json) {
  out += "data: ";
  out += error_json;
  out += "\n\n";
}

void ChunkRenderer::render(std::string& out, const GenEvent& event) {
  bool first = false;
  if (event.choice < started_.size() && !started_[event.choice]) {
    started_[event.choice] = true;
    first = true;
  }
  render_chunk(out, meta_, event, first);
}

std::string render_stream(const ResponseMeta& meta, const Generation& gen, bool include_usage) {
  std::string out;
  out.reserve(2 * gen.byte_size() + 256 * (gen.events.size() + 2));
  ChunkRenderer renderer(meta, gen.n_choices);
  for (const auto& e : gen.events) renderer.render(out, e);
  if (include_usage) render_usage_chunk(out, meta, gen.usage);
  out += kDoneEvent;
  return out;
}

}  // namespace reprox::api
