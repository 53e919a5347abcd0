// Backend that forwards cache misses to an OpenAI-compatible server (vLLM,
// llama.cpp, OpenAI, another reprox) over plain HTTP/1.1, and passes other
// paths through unchanged (forward()).
//
// Threading: sockets run on the io_context given at construction (the
// proxy's I/O threads); each generation and each forward() has its own
// strand. Sink calls and forward() completions arrive on that strand.
// Each exchange uses a fresh TCP connection (no keep-alive pool yet).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include "proxy/backend/backend.hpp"
#include "proxy/backend/http_url.hpp"

namespace reprox::backend {

struct UpstreamOptions {
  // http://host[:port][/base]; a trailing "/v1" on the base is optional.
  std::string url;
  // When set, "Authorization: Bearer <api_key>" replaces the client's.
  std::string api_key;
  std::chrono::milliseconds connect_timeout{5000};
  std::chrono::milliseconds first_byte_timeout{60000};
  std::chrono::milliseconds idle_timeout{60000};  // between body pieces
  size_t max_response_bytes = 64u << 20;
  // Reported when the upstream sends no system_fingerprint, and by fingerprint().
  std::string fingerprint;
  // resolve_model("") answers this; models() lists it when set.
  std::string default_model;
  int64_t default_max_tokens = 4096;  // for the cache key only; never sent
};

class UpstreamBackend : public Backend {
 public:
  // Throws std::invalid_argument when the URL is malformed or https (no TLS
  // support yet).
  UpstreamBackend(UpstreamOptions options, boost::asio::io_context& ioc);
  // Each exchange runs on the context `pick` returns (e.g. the I/O pool's
  // next(), so upstream traffic spreads over the I/O threads).
  using ContextPicker = std::function<boost::asio::io_context&()>;
  UpstreamBackend(UpstreamOptions options, ContextPicker pick);

  // Never refuses immediately: connection problems arrive as on_error.
  std::unique_ptr<GenerationHandle> generate(std::shared_ptr<const BackendRequest> request,
                                             std::shared_ptr<GenerationSink> sink,
                                             api::ApiError* error) override;

  std::vector<ModelInfo> models() const override;
  std::optional<std::string> resolve_model(const std::string& requested) const override;
  std::string fingerprint(const std::string& model_id) const override;
  int64_t default_max_tokens(const std::string& model_id) const override;
  // Everything is accepted: the upstream decides.
  std::optional<api::ApiError> check_supported(const api::ChatRequest& request) const override;
  bool forwards_other_fields() const override { return true; }

  using Request = boost::beast::http::request<boost::beast::http::string_body>;
  using Response = boost::beast::http::response<boost::beast::http::string_body>;
  // Passthrough for other paths: sends `request` (its target joined to the
  // upstream's base, hop-by-hop headers dropped, Authorization replaced when
  // an api_key is set) and calls `done` exactly once with the upstream's
  // response (hop-by-hop headers dropped, body whole) or a 502/504
  // OpenAI-style JSON error. The response is buffered whole (bounded by
  // max_response_bytes), so streamed bodies arrive at once.
  void forward(Request request, std::function<void(Response)> done);

  const HttpUrl& url() const { return url_; }
  const UpstreamOptions& options() const { return options_; }

 private:
  UpstreamOptions options_;
  HttpUrl url_;
  ContextPicker pick_;
};

}  // namespace reprox::backend
