#include "proxy/backend/http_url.hpp"

#include <gtest/gtest.h>

namespace reprox::backend {
namespace {

HttpUrl parse_ok(const std::string& text) {
  std::string error;
  auto url = parse_http_url(text, &error);
  EXPECT_TRUE(url) << text << ": " << error;
  return url.value_or(HttpUrl{});
}

TEST(HttpUrl, HostPortAndDefaults) {
  HttpUrl a = parse_ok("http://127.0.0.1:8000");
  EXPECT_EQ(a.scheme, "http");
  EXPECT_EQ(a.host, "127.0.0.1");
  EXPECT_EQ(a.port, 8000);
  EXPECT_EQ(a.root, "");
  EXPECT_EQ(a.host_header(), "127.0.0.1:8000");

  HttpUrl b = parse_ok("HTTP://Example.COM/");
  EXPECT_EQ(b.host, "example.com");
  EXPECT_EQ(b.port, 80);
  EXPECT_EQ(b.host_header(), "example.com");

  HttpUrl c = parse_ok("https://api.openai.com/v1");
  EXPECT_EQ(c.scheme, "https");
  EXPECT_EQ(c.port, 443);
  EXPECT_EQ(c.root, "");
}

TEST(HttpUrl, TrailingV1IsTheApiVersionNotTheRoot) {
  EXPECT_EQ(parse_ok("http://h:1/v1").root, "");
  EXPECT_EQ(parse_ok("http://h:1/v1/").root, "");
  EXPECT_EQ(parse_ok("http://h:1/openai/v1").root, "/openai");
  EXPECT_EQ(parse_ok("http://h:1/openai/").root, "/openai");
  EXPECT_EQ(parse_ok("http://h:1/v10").root, "/v10");
}

TEST(HttpUrl, TargetJoinsTheRoot) {
  EXPECT_EQ(parse_ok("http://h/v1").target_for("/v1/chat/completions"), "/v1/chat/completions");
  EXPECT_EQ(parse_ok("http://h/x/v1").target_for("/v1/models"), "/x/v1/models");
  EXPECT_EQ(parse_ok("http://h/x").target_for("/tokenize?a=1"), "/x/tokenize?a=1");
  EXPECT_EQ(parse_ok("http://h").target_for("health"), "/health");
}

TEST(HttpUrl, Ipv6) {
  HttpUrl u = parse_ok("http://[::1]:9000/v1");
  EXPECT_EQ(u.host, "::1");
  EXPECT_EQ(u.port, 9000);
  EXPECT_EQ(u.host_header(), "[::1]:9000");
  EXPECT_EQ(u.display(), "http://[::1]:9000");
  EXPECT_EQ(parse_ok("http://[fe80::1]").port, 80);
}

TEST(HttpUrl, Rejects) {
  for (const char* bad : {"", "127.0.0.1:8000", "ftp://h", "http://", "http://:80", "http://h:",
                          "http://h:0", "http://h:65536", "http://h:8x", "http://u:p@h",
                          "http://h/?q=1", "http://h/#f", "http://[::1", "http://[::1]x",
                          "http://[::1]:"}) {
    std::string error;
    EXPECT_FALSE(parse_http_url(bad, &error)) << bad;
    EXPECT_FALSE(error.empty()) << bad;
  }
}

}  // namespace
}  // namespace reprox::backend
