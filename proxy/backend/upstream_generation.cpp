#include "proxy/backend/upstream_generation.hpp"

#include <algorithm>

namespace reprox::backend {
namespace {

constexpr size_t kErrorBodyKeptBytes = 64 * 1024;

}  // namespace

UpstreamGeneration::UpstreamGeneration(std::shared_ptr<GenerationSink> sink, uint32_t n_choices,
                                       std::string upstream_name,
                                       std::string fallback_fingerprint, size_t max_event_bytes,
                                       CancelFlag cancelled)
    : sink_(std::move(sink)),
      upstream_name_(std::move(upstream_name)),
      fallback_fingerprint_(std::move(fallback_fingerprint)),
      cancelled_(std::move(cancelled)),
      decoder_(n_choices),
      sse_(max_event_bytes) {}

bool UpstreamGeneration::on_header(const http::response_header<>& header) {
  status_ = static_cast<int>(header.result_int());
  if (status_ != 200) {
    mode_ = Mode::error_body;
    return true;
  }
  auto content_type = header[http::field::content_type];
  mode_ = content_type.find("text/event-stream") != beast::string_view::npos ? Mode::stream
                                                                             : Mode::whole_json;
  return true;
}

bool UpstreamGeneration::on_body(std::string_view bytes) {
  if (!live()) return false;
  switch (mode_) {
    case Mode::stream:
      if (!sse_.feed(bytes, sse_events_)) {
        error(bad_upstream_response("an SSE event exceeds the size limit", upstream_name_));
        return false;
      }
      return handle_sse_events();
    case Mode::whole_json:
      body_.append(bytes);  // bounded by the exchange's max_response_bytes
      return true;
    case Mode::error_body:
      body_.append(bytes.substr(0, kErrorBodyKeptBytes - std::min(body_.size(), kErrorBodyKeptBytes)));
      return true;
  }
  return true;
}

bool UpstreamGeneration::handle_sse_events() {
  std::vector<GenEvent> events;
  for (auto& sse : sse_events_) {
    if (sse.data == "[DONE]") {
      if (!emit(events)) return false;
      finish_stream("sent [DONE]");
      return false;
    }
    std::string problem;
    if (!decoder_.apply_chunk(sse.data, events, &problem)) {
      if (!emit(events)) return false;
      error(bad_upstream_response(problem, upstream_name_));
      return false;
    }
  }
  sse_events_.clear();
  return emit(events);
}

bool UpstreamGeneration::emit(std::vector<GenEvent>& events) {
  for (auto& ev : events) {
    if (!live()) return false;
    sink_->on_event(std::move(ev));
  }
  events.clear();
  return live();
}

void UpstreamGeneration::finish_stream(const char* how) {
  if (decoder_.all_finished()) return complete();
  error(bad_upstream_response(std::string("stream ") + how + " before choice " +
                                  std::to_string(decoder_.first_unfinished()) + " finished",
                              upstream_name_));
}

void UpstreamGeneration::on_end() {
  if (!live()) return;
  switch (mode_) {
    case Mode::stream:
      sse_.finish(sse_events_);
      if (handle_sse_events()) finish_stream("ended");
      return;
    case Mode::whole_json: {
      std::vector<GenEvent> events;
      std::string problem;
      if (!decoder_.apply_full_response(body_, events, &problem))
        return error(bad_upstream_response(problem, upstream_name_));
      if (emit(events)) finish_stream("ended");
      return;
    }
    case Mode::error_body:
      return error(error_from_upstream_status(status_, body_, upstream_name_));
  }
}

void UpstreamGeneration::on_failure(const TransportError& failure) {
  if (!live()) return;
  error(error_from_transport(failure, upstream_name_));
}

void UpstreamGeneration::complete() {
  if (!live()) return;
  ended_ = true;
  const std::string& fp =
      decoder_.fingerprint().empty() ? fallback_fingerprint_ : decoder_.fingerprint();
  sink_->on_complete(decoder_.usage(), fp);
}

void UpstreamGeneration::error(const api::ApiError& e) {
  if (!live()) return;
  ended_ = true;
  sink_->on_error(e);
}

}  // namespace reprox::backend
