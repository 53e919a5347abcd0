// Request counts and latencies land in the right instance and series,
// also when one thread uses several Metrics instances (each thread keeps the
// series it used last; an instance's slots must never serve another, even
// one built at the same address after the first is gone).
#include <gtest/gtest.h>

#include <memory>
#include <regex>
#include <string>
#include <thread>

#include "proxy/metrics/metrics.hpp"

namespace reprox {
namespace {

// The value of the series whose line starts with `series` in the text format.
double value_of(const Metrics& m, const std::string& series) {
  std::string text = m.render();
  auto at = text.find("\n" + series + " ");
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + series.size() + 2));
}

const std::string kChat200 = R"(reprox_requests_total{code="200",endpoint="/v1/chat/completions"})";
const std::string kChat400 = R"(reprox_requests_total{code="400",endpoint="/v1/chat/completions"})";
const std::string kHitCount = R"(reprox_request_duration_seconds_count{cache="hit"})";
const std::string kMissCount = R"(reprox_request_duration_seconds_count{cache="miss"})";

TEST(Metrics, CountsGoToTheirInstanceAndSeries) {
  Metrics a, b;
  for (int i = 0; i < 3; ++i) a.request("/v1/chat/completions", 200);
  b.request("/v1/chat/completions", 200);
  a.request("/v1/chat/completions", 400);
  a.request_duration("hit", 0.001);
  a.request_duration("hit", 0.002);
  b.request_duration("miss", 0.5);
  EXPECT_EQ(value_of(a, kChat200), 3);
  EXPECT_EQ(value_of(a, kChat400), 1);
  EXPECT_EQ(value_of(b, kChat200), 1);
  EXPECT_EQ(value_of(b, kChat400), -1);  // never counted there
  EXPECT_EQ(value_of(a, kHitCount), 2);
  EXPECT_EQ(value_of(a, kMissCount), 0);
  EXPECT_EQ(value_of(b, kMissCount), 1);
  EXPECT_EQ(value_of(b, kHitCount), 0);
}

TEST(Metrics, AnInstanceAtAReusedAddressStartsFromZero) {
  for (int round = 0; round < 3; ++round) {
    auto m = std::make_unique<Metrics>();  // often at the previous one's address
    m->request("/v1/chat/completions", 200);
    m->request_duration("hit", 0.001);
    EXPECT_EQ(value_of(*m, kChat200), 1) << "round " << round;
    EXPECT_EQ(value_of(*m, kHitCount), 1) << "round " << round;
  }
}

TEST(Metrics, ThreadsCountIntoTheSameSeries) {
  Metrics m;
  auto work = [&m] {
    for (int i = 0; i < 1000; ++i) {
      m.request("/v1/chat/completions", 200);
      m.request_duration("hit", 0.001);
    }
  };
  std::thread t1(work), t2(work);
  t1.join();
  t2.join();
  EXPECT_EQ(value_of(m, kChat200), 2000);
  EXPECT_EQ(value_of(m, kHitCount), 2000);
}

}  // namespace
}  // namespace reprox
