#include "proxy/backend/upstream_forward.hpp"

#include <vector>

namespace reprox::backend {

void drop_hop_by_hop(http::fields& fields) {
  std::vector<std::string> named;
  for (auto const& token : http::token_list(fields[http::field::connection]))
    named.emplace_back(token);
  for (const auto& name : named) fields.erase(name);
  for (auto f : {http::field::connection, http::field::keep_alive,
                 http::field::proxy_authenticate, http::field::proxy_authorization,
                 http::field::te, http::field::trailer, http::field::transfer_encoding,
                 http::field::upgrade})
    fields.erase(f);
}

http::request<http::string_body> make_forward_request(http::request<http::string_body> request,
                                                      const HttpUrl& url,
                                                      const std::string& api_key) {
  drop_hop_by_hop(request.base());
  request.erase(http::field::content_length);
  request.target(url.target_for(std::string(request.target())));
  request.version(11);
  request.set(http::field::host, url.host_header());
  if (!api_key.empty()) request.set(http::field::authorization, "Bearer " + api_key);
  request.keep_alive(false);
  if (!request.body().empty() || request.method() == http::verb::post ||
      request.method() == http::verb::put || request.method() == http::verb::patch)
    request.prepare_payload();
  return request;
}

ForwardObserver::ForwardObserver(std::function<void(Response)> done, std::string upstream_name,
                                 bool head)
    : done_(std::move(done)), upstream_name_(std::move(upstream_name)), head_(head) {}

bool ForwardObserver::on_header(const http::response_header<>& header) {
  response_.result(header.result_int());
  response_.version(11);
  // reprox answers for cross-origin access itself ([server] cors_origins):
  // an upstream's Access-Control-* fields do not pass.
  for (const auto& field : header)
    if (!beast::iequals(field.name_string().substr(0, 15), "access-control-"))
      response_.insert(field.name_string(), field.value());
  drop_hop_by_hop(response_.base());
  return true;
}

bool ForwardObserver::on_body(std::string_view bytes) {
  response_.body().append(bytes);  // bounded by the exchange's max_response_bytes
  return true;
}

void ForwardObserver::on_end() {
  if (!head_) {
    response_.erase(http::field::content_length);
    response_.prepare_payload();
  }
  finish(std::move(response_));
}

void ForwardObserver::on_failure(const TransportError& failure) {
  api::ApiError e = error_from_transport(failure, upstream_name_);
  Response r{static_cast<http::status>(e.status), 11};
  r.set(http::field::content_type, "application/json");
  r.body() = e.to_json();
  r.prepare_payload();
  finish(std::move(r));
}

void ForwardObserver::finish(Response response) {
  if (!done_) return;
  auto done = std::move(done_);
  done_ = nullptr;
  done(std::move(response));
}

}  // namespace reprox::backend
