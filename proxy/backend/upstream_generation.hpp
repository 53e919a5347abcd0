// The observer side of one forwarded generation: reads the upstream's SSE
// (or, tolerated, a whole JSON response) and passes GenEvents, then exactly
// one on_complete or on_error, to the sink. Runs on its exchange's strand.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "proxy/backend/backend.hpp"
#include "proxy/backend/chat_stream_decoder.hpp"
#include "proxy/backend/http_exchange.hpp"
#include "proxy/backend/sse_parser.hpp"

namespace reprox::backend {

class UpstreamGeneration : public ExchangeObserver {
 public:
  UpstreamGeneration(std::shared_ptr<GenerationSink> sink, uint32_t n_choices,
                     std::string upstream_name, std::string fallback_fingerprint,
                     size_t max_event_bytes, CancelFlag cancelled);

  bool on_header(const http::response_header<>& header) override;
  bool on_body(std::string_view bytes) override;
  void on_end() override;
  void on_failure(const TransportError& error) override;

 private:
  enum class Mode { stream, whole_json, error_body };

  // Each returns false once the generation has ended (stop reading).
  bool handle_sse_events();
  bool emit(std::vector<GenEvent>& events);
  void finish_stream(const char* how);
  void complete();
  void error(const api::ApiError& e);
  bool live() const { return !ended_ && !cancelled_->load(); }

  std::shared_ptr<GenerationSink> sink_;
  std::string upstream_name_;
  std::string fallback_fingerprint_;
  CancelFlag cancelled_;
  ChatStreamDecoder decoder_;
  SseParser sse_;
  std::vector<SseEvent> sse_events_;
  Mode mode_ = Mode::stream;
  int status_ = 0;
  std::string body_;  // whole_json / error_body modes
  bool ended_ = false;
};

}  // namespace reprox::backend
