#include "proxy/backend/upstream_backend.hpp"

#include <stdexcept>

#include "proxy/backend/http_exchange.hpp"
#include "proxy/backend/upstream_forward.hpp"
#include "proxy/backend/upstream_generation.hpp"
#include "proxy/backend/upstream_request_body.hpp"

namespace reprox::backend {
namespace {

HttpUrl parse_or_throw(const std::string& text) {
  std::string problem;
  auto url = parse_http_url(text, &problem);
  if (!url) throw std::invalid_argument(problem);
  if (url->scheme == "https")
    throw std::invalid_argument("upstream " + text +
                                ": https is not supported yet; use an http:// URL "
                                "(e.g. through a local TLS-terminating proxy)");
  return *url;
}

ExchangeLimits limits_of(const UpstreamOptions& o) {
  return ExchangeLimits{o.connect_timeout, o.first_byte_timeout, o.idle_timeout,
                        o.max_response_bytes};
}

class UpstreamHandle : public GenerationHandle {
 public:
  explicit UpstreamHandle(std::shared_ptr<HttpExchange> exchange) : exchange_(std::move(exchange)) {}
  ~UpstreamHandle() override { exchange_->cancel(); }

 private:
  std::shared_ptr<HttpExchange> exchange_;
};

}  // namespace

UpstreamBackend::UpstreamBackend(UpstreamOptions options, boost::asio::io_context& ioc)
    : UpstreamBackend(std::move(options), [&ioc]() -> boost::asio::io_context& { return ioc; }) {}

UpstreamBackend::UpstreamBackend(UpstreamOptions options, ContextPicker pick)
    : options_(std::move(options)), url_(parse_or_throw(options_.url)), pick_(std::move(pick)) {}

std::unique_ptr<GenerationHandle> UpstreamBackend::generate(
    std::shared_ptr<const BackendRequest> request, std::shared_ptr<GenerationSink> sink,
    api::ApiError*) {
  http::request<http::string_body> req{http::verb::post,
                                       url_.target_for("/v1/chat/completions"), 11};
  req.set(http::field::host, url_.host_header());
  req.set(http::field::content_type, "application/json");
  req.set(http::field::accept, "text/event-stream");
  req.set(http::field::user_agent, "reprox");
  if (!options_.api_key.empty())
    req.set(http::field::authorization, "Bearer " + options_.api_key);
  else if (!request->authorization.empty())
    req.set(http::field::authorization, request->authorization);
  req.keep_alive(false);
  req.body() = build_upstream_chat_body(*request);
  req.prepare_payload();

  auto cancelled = std::make_shared<std::atomic<bool>>(false);
  uint32_t n = request->chat.n > 0 ? static_cast<uint32_t>(request->chat.n) : 1;
  auto observer = std::make_shared<UpstreamGeneration>(std::move(sink), n, url_.display(),
                                                       options_.fingerprint,
                                                       options_.max_response_bytes, cancelled);
  auto exchange = HttpExchange::start(pick_(), url_, limits_of(options_), std::move(req),
                                      std::move(observer), std::move(cancelled));
  return std::make_unique<UpstreamHandle>(std::move(exchange));
}

std::vector<ModelInfo> UpstreamBackend::models() const {
  if (options_.default_model.empty()) return {};
  ModelInfo info;
  info.id = options_.default_model;
  info.owned_by = "upstream";
  return {info};
}

std::optional<std::string> UpstreamBackend::resolve_model(const std::string& requested) const {
  if (!requested.empty()) return requested;
  if (!options_.default_model.empty()) return options_.default_model;
  return std::nullopt;
}

std::string UpstreamBackend::fingerprint(const std::string&) const { return options_.fingerprint; }

int64_t UpstreamBackend::default_max_tokens(const std::string&) const {
  return options_.default_max_tokens;
}

std::optional<api::ApiError> UpstreamBackend::check_supported(const api::ChatRequest&) const {
  return std::nullopt;
}

void UpstreamBackend::forward(Request request, std::function<void(Response)> done) {
  bool head = request.method() == http::verb::head;
  Request upstream_request = make_forward_request(std::move(request), url_, options_.api_key);
  auto cancelled = std::make_shared<std::atomic<bool>>(false);
  auto observer = std::make_shared<ForwardObserver>(std::move(done), url_.display(), head);
  HttpExchange::start(pick_(), url_, limits_of(options_), std::move(upstream_request),
                      std::move(observer), std::move(cancelled));
}

}  // namespace reprox::backend
