#include "proxy/backend/http_url.hpp"

#include <cctype>

namespace reprox::backend {
namespace {

bool fail(std::string* error, std::string message) {
  if (error) *error = std::move(message);
  return false;
}

bool parse_port(std::string_view digits, uint16_t& port) {
  if (digits.empty() || digits.size() > 5) return false;
  uint32_t value = 0;
  for (char c : digits) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    value = value * 10 + static_cast<uint32_t>(c - '0');
  }
  if (value == 0 || value > 65535) return false;
  port = static_cast<uint16_t>(value);
  return true;
}

std::string lowercase(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::string HttpUrl::target_for(std::string_view client_target) const {
  std::string out = root;
  if (client_target.empty() || client_target.front() != '/') out += '/';
  out += client_target;
  return out;
}

std::string HttpUrl::host_header() const {
  std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  bool default_port = (scheme == "http" && port == 80) || (scheme == "https" && port == 443);
  if (!default_port) h += ":" + std::to_string(port);
  return h;
}

std::string HttpUrl::display() const {
  std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return scheme + "://" + h + ":" + std::to_string(port) + root;
}

std::optional<HttpUrl> parse_http_url(std::string_view text, std::string* error) {
  HttpUrl url;
  size_t sep = text.find("://");
  if (sep == std::string_view::npos) {
    fail(error, "upstream URL must start with http:// (got \"" + std::string(text) + "\")");
    return std::nullopt;
  }
  url.scheme = lowercase(text.substr(0, sep));
  if (url.scheme != "http" && url.scheme != "https") {
    fail(error, "upstream URL scheme must be http or https (got \"" + url.scheme + "\")");
    return std::nullopt;
  }
  url.port = url.scheme == "https" ? 443 : 80;
  std::string_view rest = text.substr(sep + 3);
  if (rest.find_first_of("?#") != std::string_view::npos) {
    fail(error, "upstream URL must not carry a query or fragment");
    return std::nullopt;
  }
  size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
  if (authority.find('@') != std::string_view::npos) {
    fail(error, "upstream URL must not carry user info; use the API key setting");
    return std::nullopt;
  }
  std::string_view host = authority;
  std::string_view port;
  if (!authority.empty() && authority.front() == '[') {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) {
      fail(error, "upstream URL has an unterminated IPv6 address");
      return std::nullopt;
    }
    host = authority.substr(1, close - 1);
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') {
        fail(error, "upstream URL has junk after the IPv6 address");
        return std::nullopt;
      }
      port = after.substr(1);
      if (port.empty()) port = "x";  // "[::1]:" is an error
    }
  } else {
    size_t colon = authority.rfind(':');
    if (colon != std::string_view::npos) {
      host = authority.substr(0, colon);
      port = authority.substr(colon + 1);
      if (port.empty()) port = "x";
    }
  }
  if (host.empty()) {
    fail(error, "upstream URL has no host");
    return std::nullopt;
  }
  if (!port.empty() && !parse_port(port, url.port)) {
    fail(error, "upstream URL has an invalid port \"" + std::string(port) + "\"");
    return std::nullopt;
  }
  url.host = lowercase(host);
  std::string root(path);
  while (!root.empty() && root.back() == '/') root.pop_back();
  if (root.size() >= 3 && root.compare(root.size() - 3, 3, "/v1") == 0) root.resize(root.size() - 3);
  while (!root.empty() && root.back() == '/') root.pop_back();
  url.root = std::move(root);
  return url;
}

}  // namespace reprox::backend
