// The structured record of one complete generation: what the memory and Redis
// tiers store, what single-flight followers replay, and what the renderer
// turns into a JSON body or an SSE stream.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace reprox {

// One streamed delta of one choice, as the client saw it.
struct Delta {
  std::string content;  // text piece; may be empty
  // Other delta members as raw JSON object members without braces, e.g.
  // "\"tool_calls\":[...]" (upstream passthrough); empty when none.
  std::string extra;
  // Members of logprobs.content for the tokens of this piece, as raw JSON
  // array elements without brackets; empty when logprobs were not asked for.
  std::string logprobs;
};

// One SSE chunk's worth: a delta for one choice, possibly finishing it.
struct GenEvent {
  uint32_t choice = 0;
  Delta delta;
  std::string finish_reason;  // non-empty on the choice's last event
};

// A GenEvent read in place (from a Generation, or from its encoded bytes
// without decoding them: see EncodedGeneration).
struct EventView {
  uint32_t choice = 0;
  std::string_view content, extra, logprobs, finish_reason;
};

inline EventView view_of(const GenEvent& e) {
  return EventView{e.choice, e.delta.content, e.delta.extra, e.delta.logprobs, e.finish_reason};
}

struct Usage {
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t cached_tokens = 0;  // usage.prompt_tokens_details.cached_tokens
};

struct Generation {
  std::string model;               // model id to report
  std::string system_fingerprint;  // "fp_" + 16 hex, or what the upstream said
  std::string ns;                  // cache namespace it was stored under (for purge)
  uint32_t n_choices = 1;
  std::vector<GenEvent> events;  // in stream order, choices interleaved
  Usage usage;
  int64_t created_unix_ms = 0;  // when the generation completed (for `age`)

  // True when every choice has a finish_reason: only then may it be stored.
  bool complete() const {
    std::vector<bool> finished(n_choices, false);
    uint32_t count = 0;
    for (const auto& e : events) {
      if (e.finish_reason.empty() || e.choice >= n_choices || finished[e.choice]) continue;
      finished[e.choice] = true;
      ++count;
    }
    return n_choices > 0 && count == n_choices;
  }
  // Approximate heap footprint, for the cache's byte budget.
  size_t byte_size() const {
    size_t bytes = sizeof(*this) + model.size() + system_fingerprint.size() + ns.size();
    for (const auto& e : events)
      bytes += sizeof(e) + e.delta.content.size() + e.delta.extra.size() + e.delta.logprobs.size() +
               e.finish_reason.size();
    return bytes;
  }
};

}  // namespace reprox
