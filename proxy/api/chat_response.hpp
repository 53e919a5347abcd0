// Renders a generation (live or cached) as an OpenAI chat.completion JSON
// body or as chat.completion.chunk SSE events. The same events always give
// the same bytes, apart from `id` and `created`, which are fresh per answer.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/generation.hpp"

namespace reprox::api {

struct ResponseMeta {
  std::string id;       // "chatcmpl-" and letters and digits (written without JSON escaping)
  int64_t created = 0;  // unix seconds
  std::string model;
  std::string system_fingerprint;
};

ResponseMeta fresh_meta(const std::string& model, const std::string& system_fingerprint);
std::string new_completion_id();

// Full non-streaming body: render_completion_from_tail(meta, render_completion_tail(gen)).
std::string render_completion(const ResponseMeta& meta, const Generation& gen);
// The part of the body that is the same for every answer from `gen`: all
// after the head (id, object, created, model, system_fingerprint), that is
// `,"choices":[...],"usage":{...}}`. Lets hits render it once per entry.
std::string render_completion_tail(const Generation& gen);
// The same tail from a generation's parts, its events walked by
// `for_each_event` (e.g. EncodedGeneration's, over a Redis entry's bytes,
// which a non-stream hit then never decodes).
using EventWalk = std::function<void(const std::function<void(const EventView&)>&)>;
std::string render_completion_tail(uint32_t n_choices, const Usage& usage, const EventWalk& for_each_event);
std::string render_completion_from_tail(const ResponseMeta& meta, const std::string& tail);
// The same body in two parts, for answers that repeat one entry: the part
// after "created" (`,"model":...,"system_fingerprint":...` and the tail),
// the same for every answer of the entry, and the fresh head in front of it.
// render_completion_from_suffix(id, created, render_completion_suffix(model,
// fingerprint, tail)) equals render_completion_from_tail({id, created, model,
// fingerprint}, tail). `id` must need no JSON escaping (new_completion_id).
std::string render_completion_suffix(const std::string& model, const std::string& fingerprint,
                                     const std::string& tail);
std::string render_completion_from_suffix(std::string_view id, int64_t created, const std::string& suffix);
// Unix seconds now, as fresh_meta() stamps `created`.
int64_t unix_seconds_now();

// Streaming: one `data: {...}\n\n` event. `first_of_choice` adds the
// assistant role to the delta, as OpenAI does on a choice's first chunk.
void render_chunk(std::string& out, const ResponseMeta& meta, const GenEvent& event, bool first_of_choice);
void render_usage_chunk(std::string& out, const ResponseMeta& meta, const Usage& usage);
void render_error_event(std::string& out, const std::string& error_json);
inline constexpr const char* kDoneEvent = "data: [DONE]\n\n";

void write_usage(std::string& out, const Usage& usage);

// Replays a whole stored generation as SSE, [DONE] included.
std::string render_stream(const ResponseMeta& meta, const Generation& gen, bool include_usage);

// Tracks which choices have sent their first chunk, for live streams.
class ChunkRenderer {
 public:
  ChunkRenderer(ResponseMeta meta, uint32_t n_choices) : meta_(std::move(meta)), started_(n_choices, false) {}
  void render(std::string& out, const GenEvent& event);
  const ResponseMeta& meta() const { return meta_; }

 private:
  ResponseMeta meta_;
  std::vector<bool> started_;
};

}  // namespace reprox::api
