// Fuzz target: a raw HTTP/1.1 request through Boost.Beast's request parser
// configured as HttpSession configures it (ServerOptions' header and body
// limits, string body), then, for a complete POST /v1/chat/completions, what
// prepare_chat does without a backend: body validation, the cache
// directives from the headers, the tenant and the canonical key.
// Properties: nothing crashes; the framing the server relies on holds (a
// complete message has a body within the limit); a key is 64 hex characters
// and the same request and context always give the same key.
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "policies/canonical_key.hpp"
#include "policies/tenant.hpp"
#include "proxy/api/cache_control.hpp"
#include "proxy/api/chat_request_parser.hpp"
#include "proxy/server/server_options.hpp"
#include "tests/fuzz/fuzz_check.hpp"

namespace {

namespace beast = boost::beast;
namespace http = boost::beast::http;
using Request = http::request<http::string_body>;

// The key prepare_chat would compute, with a fixed model and fingerprint.
reprox::policy::KeyResult key_of(const Request& req, reprox::api::ChatRequest chat) {
  auto header_dirs = reprox::api::parse_cache_control(std::string(req[http::field::cache_control]));
  std::optional<std::string_view> ns_header;
  if (auto it = req.find("x-reprox-namespace"); it != req.end()) ns_header = it->value();
  chat.cache = reprox::api::merge_cache_directives(chat.cache, header_dirs, ns_header);
  reprox::policy::KeyContext kc;
  kc.model_id = chat.model.empty() ? "reprox-tiny" : chat.model;
  kc.fingerprint = "fp_0123456789abcdef";
  kc.tenant = reprox::policy::tenant_of(req[http::field::authorization]);
  kc.ns = chat.cache.ns.value_or("");
  kc.effective_max_tokens = reprox::policy::effective_max_tokens(chat, 256);
  return reprox::policy::make_key(chat, kc);
}

void check_chat(const Request& req) {
  auto parsed = reprox::api::parse_chat_request(req.body());
  if (!parsed.ok()) return;
  const auto first = key_of(req, *parsed.request);
  FUZZ_CHECK(first.key.size() == 64, "a key is 64 hex characters");
  FUZZ_CHECK(first.key.find_first_not_of("0123456789abcdef") == std::string::npos, "a key is lowercase hex");
  FUZZ_CHECK(key_of(req, *parsed.request).key == first.key, "the key is deterministic");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const reprox::ServerOptions options;
  http::request_parser<http::string_body> parser;
  parser.header_limit(static_cast<std::uint32_t>(options.header_limit));
  parser.body_limit(options.body_limit);
  beast::error_code ec;
  size_t offset = 0;
  // Fed as the socket would: whatever has arrived, again after each consumed part.
  while (offset < size && !parser.is_done()) {
    const size_t used = parser.put(boost::asio::buffer(data + offset, size - offset), ec);
    if (ec == http::error::need_more) break;
    if (ec || used == 0) break;
    offset += used;
  }
  if (!ec && !parser.is_done() && offset == size) parser.put_eof(ec);
  if (ec || !parser.is_done()) return 0;
  const Request& req = parser.get();
  FUZZ_CHECK(req.body().size() <= options.body_limit, "the body is within the limit");
  if (req.method() == http::verb::post && req.target() == "/v1/chat/completions") check_chat(req);
  return 0;
}
