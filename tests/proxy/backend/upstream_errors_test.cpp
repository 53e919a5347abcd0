#include "proxy/backend/upstream_errors.hpp"

#include <gtest/gtest.h>

namespace reprox::backend {
namespace {

const std::string kUp = "http://127.0.0.1:9";

TEST(UpstreamErrors, ClientErrorsKeepStatusAndBody) {
  auto e = error_from_upstream_status(
      429, R"({"error":{"message":"Rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded"}})", kUp);
  EXPECT_EQ(e.status, 429);
  EXPECT_EQ(e.message, "Rate limit reached");
  EXPECT_EQ(e.type, "requests");
  EXPECT_EQ(e.param, "");
  EXPECT_EQ(e.code, "rate_limit_exceeded");

  e = error_from_upstream_status(400, R"({"error":{"message":"bad temperature","type":"invalid_request_error","param":"temperature","code":null}})", kUp);
  EXPECT_EQ(e.status, 400);
  EXPECT_EQ(e.param, "temperature");
  EXPECT_EQ(e.code, "");

  EXPECT_EQ(error_from_upstream_status(404, R"({"detail":"Not Found"})", kUp).message, "Not Found");
  EXPECT_EQ(error_from_upstream_status(401, R"({"error":"no key"})", kUp).message, "no key");
  e = error_from_upstream_status(401, "<html>nope</html>", kUp);
  EXPECT_EQ(e.status, 401);
  EXPECT_NE(e.message.find("HTTP 401"), std::string::npos);
  EXPECT_EQ(error_from_upstream_status(400, R"({"error":{"message":"m","code":400}})", kUp).code, "400");
}

TEST(UpstreamErrors, ServerErrorsBecome502) {
  auto e = error_from_upstream_status(503, R"({"error":{"message":"overloaded","type":"server_error"}})", kUp);
  EXPECT_EQ(e.status, 502);
  EXPECT_EQ(e.type, "upstream_error");
  EXPECT_NE(e.message.find("overloaded"), std::string::npos);
  EXPECT_NE(e.message.find(kUp), std::string::npos);
  EXPECT_EQ(error_from_upstream_status(302, "", kUp).status, 502);
}

TEST(UpstreamErrors, Transport) {
  auto refused = error_from_transport({TransportFailure::connect_failed, "Connection refused"}, kUp);
  EXPECT_EQ(refused.status, 502);
  EXPECT_EQ(refused.type, "upstream_error");
  EXPECT_NE(refused.message.find(kUp), std::string::npos);
  EXPECT_NE(refused.message.find("Connection refused"), std::string::npos);
  for (auto kind : {TransportFailure::connect_timeout, TransportFailure::first_byte_timeout,
                    TransportFailure::idle_timeout}) {
    auto e = error_from_transport({kind, ""}, kUp);
    EXPECT_EQ(e.status, 504);
    EXPECT_EQ(e.type, "upstream_timeout");
  }
  EXPECT_EQ(error_from_transport({TransportFailure::connection_lost, ""}, kUp).status, 502);
  EXPECT_EQ(bad_upstream_response("x", kUp).status, 502);
}

}  // namespace
}  // namespace reprox::backend
