#include "proxy/backend/upstream_errors.hpp"

#include "common/json.hpp"

namespace reprox::backend {
namespace {

api::ApiError make(int status, std::string type, std::string code, std::string message) {
  api::ApiError e;
  e.status = status;
  e.type = std::move(type);
  e.code = std::move(code);
  e.message = std::move(message);
  return e;
}

std::string string_or_number(const json::Value* v) {
  if (!v) return "";
  if (v->is_string()) return v->as_string();
  if (v->is_number()) return json::dump(*v);
  return "";
}

// Fills message/type/param/code from the common error body shapes:
// {"error":{"message",...}} (OpenAI, vLLM), {"error":"text"},
// {"message":"text"}, {"detail":"text"} (FastAPI).
void read_error_body(std::string_view body, api::ApiError& e) {
  json::Value doc;
  if (json::parse(body, doc) || !doc.is_object()) return;
  const json::Value* err = doc.find("error");
  const json::Value* holder = err && err->is_object() ? err : &doc;
  if (err && err->is_string()) {
    e.message = err->as_string();
    return;
  }
  if (const json::Value* m = holder->find("message"); m && m->is_string()) e.message = m->as_string();
  else if (const json::Value* d = holder->find("detail"); d && d->is_string()) e.message = d->as_string();
  if (const json::Value* t = holder->find("type"); t && t->is_string() && !t->as_string().empty())
    e.type = t->as_string();
  e.param = string_or_number(holder->find("param"));
  e.code = string_or_number(holder->find("code"));
}

}  // namespace

api::ApiError error_from_transport(const TransportError& failure, const std::string& upstream) {
  std::string detail = failure.detail.empty() ? "" : " (" + failure.detail + ")";
  switch (failure.kind) {
    case TransportFailure::resolve_failed:
      return make(502, "upstream_error", "resolve_failed",
                  "could not resolve upstream " + upstream + detail);
    case TransportFailure::connect_failed:
      return make(502, "upstream_error", "connect_failed",
                  "could not connect to upstream " + upstream + detail);
    case TransportFailure::connect_timeout:
      return make(504, "upstream_timeout", "connect_timeout",
                  "timed out connecting to upstream " + upstream);
    case TransportFailure::first_byte_timeout:
      return make(504, "upstream_timeout", "first_byte_timeout",
                  "upstream " + upstream + " did not answer in time");
    case TransportFailure::idle_timeout:
      return make(504, "upstream_timeout", "idle_timeout",
                  "upstream " + upstream + " stopped sending mid-response");
    case TransportFailure::connection_lost:
      return make(502, "upstream_error", "connection_lost",
                  "connection to upstream " + upstream + " was lost before the response ended" +
                      detail);
    case TransportFailure::response_too_large:
      return make(502, "upstream_error", "response_too_large",
                  "upstream " + upstream + " sent a response larger than the configured limit");
    case TransportFailure::bad_http:
      return make(502, "upstream_error", "bad_response",
                  "upstream " + upstream + " sent a malformed HTTP response" + detail);
  }
  return make(502, "upstream_error", "", "upstream " + upstream + " failed");
}

api::ApiError error_from_upstream_status(int status, std::string_view body,
                                         const std::string& upstream) {
  if (status >= 400 && status < 500) {
    api::ApiError e = make(status, "invalid_request_error", "",
                           "upstream " + upstream + " answered HTTP " + std::to_string(status));
    read_error_body(body, e);
    return e;
  }
  api::ApiError inner;
  read_error_body(body, inner);
  std::string message = "upstream " + upstream + " answered HTTP " + std::to_string(status);
  if (!inner.message.empty()) message += ": " + inner.message;
  return make(502, "upstream_error", "upstream_status_" + std::to_string(status), message);
}

api::ApiError bad_upstream_response(const std::string& detail, const std::string& upstream) {
  return make(502, "upstream_error", "bad_response", "upstream " + upstream + ": " + detail);
}

}  // namespace reprox::backend
