// serialize_head() must write exactly the bytes Beast's serializer writes for
// a response's head: it replaced http::async_write on the hot path.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "proxy/server/http_session.hpp"

namespace reprox {
namespace {

// The head as Beast serializes it (everything before the body).
std::string beast_head(Response response) {
  std::string body = response.body();
  std::ostringstream os;
  os << response;
  std::string all = os.str();
  EXPECT_GE(all.size(), body.size());
  EXPECT_EQ(all.substr(all.size() - body.size()), body);
  return all.substr(0, all.size() - body.size());
}

std::string ours(const Response& response) {
  std::string out = "stale bytes from an earlier response";
  serialize_head(response, out);
  return out;
}

TEST(ResponseHead, MatchesBeastForAJsonAnswer) {
  Response res{http::status::ok, 11};
  res.set(http::field::content_type, "application/json");
  res.set("x-reprox-cache", "hit");
  res.set("x-reprox-key", std::string(64, 'a'));
  res.set(http::field::age, "3");
  res.body() = R"({"id":"chatcmpl-1","choices":[]})";
  res.keep_alive(true);
  res.prepare_payload();
  EXPECT_EQ(ours(res), beast_head(res));
  EXPECT_NE(ours(res).find("Content-Length: " + std::to_string(res.body().size()) + "\r\n"), std::string::npos);
}

TEST(ResponseHead, MatchesBeastForErrorsAndClose) {
  for (auto status : {http::status::bad_request, http::status::not_found, http::status::payload_too_large,
                      http::status::too_many_requests, http::status::service_unavailable,
                      http::status::request_header_fields_too_large}) {
    Response res{status, 11};
    res.set(http::field::content_type, "application/json");
    res.body() = R"({"error":{"message":"x"}})";
    res.keep_alive(false);
    res.prepare_payload();
    EXPECT_EQ(ours(res), beast_head(res)) << static_cast<int>(status);
  }
}

TEST(ResponseHead, MatchesBeastForACustomReasonHttp10AndNoBody) {
  Response res{http::status::ok, 10};
  res.reason("Fine");
  res.set(http::field::cache_control, "no-store");
  res.insert("x-many", "1");
  res.insert("x-many", "2");
  res.prepare_payload();
  EXPECT_EQ(ours(res), beast_head(res));
  EXPECT_EQ(ours(res).rfind("HTTP/1.0 200 Fine\r\n", 0), 0u);

  Response unknown{static_cast<http::status>(299), 11};
  unknown.prepare_payload();
  EXPECT_EQ(ours(unknown), beast_head(unknown));
}

// A streamed answer's head: chunked, no body; Beast's head alone.
TEST(ResponseHead, MatchesBeastForAStreamHead) {
  http::response<http::empty_body> head{http::status::ok, 11};
  head.set(http::field::content_type, "text/event-stream");
  head.set(http::field::cache_control, "no-cache");
  head.set("x-reprox-cache", "miss");
  head.keep_alive(true);
  head.chunked(true);
  std::ostringstream os;
  os << head.base();
  std::string out;
  serialize_head(head, out);
  EXPECT_EQ(out, os.str());
  EXPECT_NE(out.find("Transfer-Encoding: chunked\r\n"), std::string::npos);
}

// A rendered answer's head (the cache-hit path) is byte for byte the head
// Beast writes for the same answer as a Response, open or closing.
TEST(ResponseHead, RenderedAnswerMatchesBeast) {
  for (bool keep_alive : {true, false}) {
    for (unsigned status : {200u, 404u, 504u}) {
      RenderedAnswer answer;
      answer.status = status;
      answer.fields = "Content-Type: application/json\r\nx-reprox-cache: hit\r\nx-reprox-key: " + std::string(64, 'b') +
                      "\r\nx-reprox-seed: 18446744073709551615\r\nAge: 0\r\nx-reprox-tier: memory\r\n";
      answer.body = R"({"id":"chatcmpl-2","choices":[]})";
      std::string rendered;
      serialize_rendered_head(answer, keep_alive, rendered);
      Response res = to_response(RenderedAnswer(answer));
      res.keep_alive(keep_alive);
      res.prepare_payload();
      EXPECT_EQ(rendered, beast_head(res)) << status << " keep-alive " << keep_alive;
      EXPECT_EQ(res["x-reprox-seed"], "18446744073709551615");
      EXPECT_EQ(res.body(), answer.body);
    }
  }
}

}  // namespace
}  // namespace reprox
