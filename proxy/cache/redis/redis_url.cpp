#include "proxy/cache/redis/redis_url.hpp"

#include <charconv>

namespace reprox {

namespace {

bool parse_int(std::string_view s, int min, int max, int& out) {
  int v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || v < min || v > max) return false;
  out = v;
  return true;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool percent_decode(std::string_view in, std::string& out) {
  out.clear();
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] != '%') {
      out.push_back(in[i]);
      continue;
    }
    if (i + 2 >= in.size()) return false;
    int hi = hex_value(in[i + 1]), lo = hex_value(in[i + 2]);
    if (hi < 0 || lo < 0) return false;
    out.push_back(char(hi * 16 + lo));
    i += 2;
  }
  return true;
}

bool fail(std::string* error, std::string message) {
  if (error) *error = std::move(message);
  return false;
}

bool parse_userinfo(std::string_view info, RedisEndpoint& ep, std::string* error) {
  auto colon = info.find(':');
  std::string_view user = colon == std::string_view::npos ? std::string_view{} : info.substr(0, colon);
  std::string_view pass = colon == std::string_view::npos ? info : info.substr(colon + 1);
  if (!percent_decode(user, ep.username) || !percent_decode(pass, ep.password))
    return fail(error, "bad percent-encoding in the redis URL's credentials");
  if (ep.password.empty()) return fail(error, "redis URL has credentials but no password");
  return true;
}

bool parse_query(std::string_view query, RedisEndpoint& ep, std::string* error) {
  while (!query.empty()) {
    auto amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    auto eq = pair.find('=');
    if (eq == std::string_view::npos) return fail(error, "redis URL query needs name=value pairs");
    std::string_view name = pair.substr(0, eq), value = pair.substr(eq + 1);
    int* target = nullptr;
    int max = 600000;
    if (name == "db") {
      target = &ep.db;
      max = 1 << 20;
    } else if (name == "connect_timeout_ms") {
      target = &ep.connect_timeout_ms;
    } else if (name == "command_timeout_ms") {
      target = &ep.command_timeout_ms;
    } else {
      return fail(error, "unknown redis URL parameter '" + std::string(name) + "'");
    }
    if (!parse_int(value, 0, max, *target)) return fail(error, "bad value for redis URL parameter '" + std::string(name) + "'");
  }
  return true;
}

}  // namespace

std::string RedisEndpoint::describe() const {
  std::string s = is_unix ? "unix://" + path : "redis://" + host + ":" + std::to_string(port);
  if (db != 0) s += " db " + std::to_string(db);
  if (!password.empty()) s += " (auth)";
  return s;
}

std::optional<RedisEndpoint> parse_redis_url(const std::string& url, std::string* error) {
  RedisEndpoint ep;
  std::string_view rest(url);
  if (rest.rfind("redis://", 0) == 0) {
    rest.remove_prefix(8);
  } else if (rest.rfind("unix://", 0) == 0) {
    rest.remove_prefix(7);
    ep.is_unix = true;
  } else {
    fail(error, "redis URL must start with redis:// or unix://");
    return std::nullopt;
  }
  std::string_view query;
  if (auto q = rest.find('?'); q != std::string_view::npos) {
    query = rest.substr(q + 1);
    rest = rest.substr(0, q);
  }
  // Credentials end at the last '@' before the host (tcp) or the path (unix).
  if (auto at = rest.rfind('@'); at != std::string_view::npos) {
    if (!parse_userinfo(rest.substr(0, at), ep, error)) return std::nullopt;
    rest.remove_prefix(at + 1);
  }
  if (ep.is_unix) {
    if (rest.empty() || rest.front() != '/') {
      fail(error, "unix redis URL needs an absolute socket path: unix:///path");
      return std::nullopt;
    }
    ep.path = std::string(rest);
  } else {
    std::string_view hostport = rest;
    if (auto slash = rest.find('/'); slash != std::string_view::npos) {
      hostport = rest.substr(0, slash);
      std::string_view db = rest.substr(slash + 1);
      if (!db.empty() && !parse_int(db, 0, 1 << 20, ep.db)) {
        fail(error, "redis URL database must be a number: '" + std::string(db) + "'");
        return std::nullopt;
      }
    }
    std::string_view host = hostport;
    if (!hostport.empty() && hostport.front() == '[') {  // [ipv6]:port
      auto close = hostport.find(']');
      if (close == std::string_view::npos) {
        fail(error, "unterminated [ in redis URL host");
        return std::nullopt;
      }
      host = hostport.substr(1, close - 1);
      hostport.remove_prefix(close + 1);
      if (!hostport.empty() && hostport.front() != ':') {
        fail(error, "junk after ] in redis URL host");
        return std::nullopt;
      }
      if (!hostport.empty() && !parse_int(hostport.substr(1), 1, 65535, ep.port)) {
        fail(error, "bad port in redis URL");
        return std::nullopt;
      }
    } else if (auto colon = hostport.rfind(':'); colon != std::string_view::npos) {
      host = hostport.substr(0, colon);
      if (!parse_int(hostport.substr(colon + 1), 1, 65535, ep.port)) {
        fail(error, "bad port in redis URL: '" + std::string(hostport.substr(colon + 1)) + "'");
        return std::nullopt;
      }
    }
    if (host.empty()) {
      fail(error, "redis URL has no host");
      return std::nullopt;
    }
    ep.host = std::string(host);
  }
  if (!parse_query(query, ep, error)) return std::nullopt;
  return ep;
}

}  // namespace reprox
