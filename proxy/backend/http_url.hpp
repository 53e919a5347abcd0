// Parsing of the upstream base URL: http://host[:port][/base] (https is
// parsed so the backend can refuse it with a clear message).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace reprox::backend {

struct HttpUrl {
  std::string scheme;  // "http" or "https"
  std::string host;    // without IPv6 brackets
  uint16_t port = 80;
  // Path prefix of the server's API root, without a trailing "/" and with a
  // trailing "/v1" removed: "http://h:8000/v1" and "http://h:8000" both give
  // "", "http://h/openai/v1/" gives "/openai".
  std::string root;

  // Request target on the upstream for a client target such as
  // "/v1/chat/completions" or "/tokenize?x=1".
  std::string target_for(std::string_view client_target) const;
  // "host:port" as the Host header wants it (IPv6 in brackets).
  std::string host_header() const;
  // scheme://host:port + root, for messages and logs.
  std::string display() const;
};

// nullopt and *error set when the text is not an absolute http(s) URL with
// a host, or carries user info, a query or a fragment.
std::optional<HttpUrl> parse_http_url(std::string_view text, std::string* error);

}  // namespace reprox::backend
