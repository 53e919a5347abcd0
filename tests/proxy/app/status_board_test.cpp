// StatusBoard's JSON (GET /reprox/v1/stats) from a Metrics object, a memory
// store and the greedy fallback; and the query parameter the status page
// takes its token from.
#include <gtest/gtest.h>

#include <string>

#include "common/json.hpp"
#include "proxy/app/status_board.hpp"
#include "proxy/app/status_endpoints.hpp"

namespace reprox {
namespace {

const json::Value& at(const json::Value& v, std::string_view path) {
  const json::Value* cur = &v;
  while (!path.empty()) {
    size_t dot = path.find('.');
    cur = cur->find(path.substr(0, dot));
    if (!cur) throw std::runtime_error("no member " + std::string(path));
    path = dot == std::string_view::npos ? "" : path.substr(dot + 1);
  }
  return *cur;
}

json::Value parsed(StatusBoard& board) {
  json::Value v;
  const std::string text = board.stats_json();
  EXPECT_FALSE(json::parse(text, v)) << text;
  return v;
}

class StatusBoardTest : public ::testing::Test {
 protected:
  StatusBoardTest() : memory(MemoryStoreOptions{1 << 20, std::chrono::seconds(60)}) {
    app.metrics = &metrics;
    app.memory = &memory;
  }
  Metrics metrics;
  MemoryStore memory;
  AppContext app;
};

TEST_F(StatusBoardTest, CountsByCacheStatusAndHitRate) {
  StatusBoard board(app);
  for (const char* r : {"hit", "hit", "hit", "near-hit", "miss", "bypass"}) metrics.lookup(r);
  metrics.tokens(10, 30, 4);
  json::Value s = parsed(board);
  EXPECT_EQ(at(s, "totals.hit").as_int(), 3);
  EXPECT_EQ(at(s, "totals.near-hit").as_int(), 1);
  EXPECT_EQ(at(s, "totals.miss").as_int(), 1);
  EXPECT_EQ(at(s, "totals.bypass").as_int(), 1);
  EXPECT_EQ(at(s, "totals.coalesced").as_int(), 0);
  EXPECT_EQ(at(s, "totals.total").as_int(), 6);
  for (const char* w : {"windows.1m", "windows.5m", "windows.15m"}) {
    const json::Value& win = at(s, w);
    EXPECT_EQ(at(win, "requests.total").as_int(), 6) << w;
    EXPECT_NEAR(at(win, "hit_rate").as_double(), 4.0 / 6, 1e-4) << w;
  }
  EXPECT_EQ(at(s, "windows.1m.window_s").as_int(), 60);
  EXPECT_EQ(at(s, "windows.15m.window_s").as_int(), 900);
  EXPECT_EQ(at(s, "engine.generated_tokens").as_int(), 30);
  EXPECT_EQ(at(s, "kv.reused_tokens").as_int(), 4);
  EXPECT_FALSE(at(s, "engine.embedded").as_bool());
  EXPECT_TRUE(at(s, "cache.redis").is_null());
  EXPECT_EQ(at(s, "history.hit_rate").as_array().size(), 30u);
  EXPECT_EQ(at(s, "history.step_s").as_int(), 30);
}

TEST_F(StatusBoardTest, NoLookupsNoHitRate) {
  StatusBoard board(app);
  json::Value s = parsed(board);
  EXPECT_TRUE(at(s, "windows.1m.hit_rate").is_null());
  EXPECT_EQ(at(s, "recent").as_array().size(), 0u);
  EXPECT_FALSE(at(s, "fallback.engaged").as_bool());
}

TEST_F(StatusBoardTest, CountsFromTheBoardsStart) {
  metrics.lookup("miss");  // before the board: not in its windows
  StatusBoard board(app);
  metrics.lookup("hit");
  board.sample();
  json::Value s = parsed(board);
  EXPECT_EQ(at(s, "totals.total").as_int(), 2);
  EXPECT_EQ(at(s, "windows.1m.requests.total").as_int(), 1);
  EXPECT_EQ(at(s, "windows.1m.hit_rate").as_double(), 1);
}

TEST_F(StatusBoardTest, MemoryTierAndRecentRequests) {
  auto gen = std::make_shared<Generation>();
  gen->events.emplace_back();
  gen->events.back().finish_reason = "stop";
  memory.put("k1", gen, std::chrono::seconds(60));
  StatusBoard board(app);
  const std::string tenant(64, 'b');
  const auto now = std::chrono::steady_clock::now();
  const int64_t now_ms = now_unix_ms();
  board.record(now - std::chrono::seconds(2), 1.5, tenant, "0123456789abcdef0123", 200, "miss", "");
  board.record(now - std::chrono::seconds(1), 0.25, tenant, "0123456789abcdef0123", 200, "hit", "memory");
  board.record(now, 0.5, "", "", 400, "error", "");
  json::Value s = parsed(board);
  EXPECT_EQ(at(s, "cache.memory.entries").as_int(), 1);
  EXPECT_GT(at(s, "cache.memory.bytes").as_int(), 0);
  const auto& recent = at(s, "recent").as_array();
  ASSERT_EQ(recent.size(), 3u);
  EXPECT_EQ(at(recent[0], "status").as_int(), 400);
  EXPECT_EQ(at(recent[0], "key").as_string(), "");
  EXPECT_EQ(at(recent[1], "cache").as_string(), "hit");
  EXPECT_EQ(at(recent[1], "tier").as_string(), "memory");
  EXPECT_EQ(at(recent[1], "tenant").as_string(), "bbbbbbbb");
  EXPECT_EQ(at(recent[1], "key").as_string(), "0123456789abcdef");
  // Arrival in unix ms, from the steady clock (within the test's own time).
  EXPECT_NEAR(double(at(recent[1], "time_ms").as_int()), double(now_ms - 1000), 50);
  EXPECT_EQ(at(recent[0], "time_ms").as_int() - at(recent[1], "time_ms").as_int(), 1000);
  EXPECT_DOUBLE_EQ(at(recent[2], "latency_ms").as_double(), 1.5);
}

TEST_F(StatusBoardTest, FallbackNamesItsModels) {
  GreedyFallback fallback(GreedyFallbackOptions{true, 2, 0.4}, [](const std::string&, bool) {});
  app.fallback = &fallback;
  StatusBoard board(app);
  for (const char* model : {"alpha", "beta (v2), large"})
    for (int i = 0; i < 2; ++i) fallback.record(model, true);
  json::Value s = parsed(board);
  EXPECT_TRUE(at(s, "fallback.engaged").as_bool());
  const auto& models = at(s, "fallback.models").as_array();
  ASSERT_EQ(models.size(), 2u);
  EXPECT_EQ(models[0].as_string(), "alpha");
  EXPECT_EQ(models[1].as_string(), "beta (v2), large");
  EXPECT_NE(at(s, "fallback.reason").as_string().find("greedy fallback"), std::string::npos);
}

TEST(StatusQuery, ReadsAndDecodesOneParameter) {
  EXPECT_EQ(query_param("/reprox/status?token=abc", "token"), "abc");
  EXPECT_EQ(query_param("/reprox/status?x=1&token=a%2Bb%20c+d&y=2", "token"), "a+b c d");
  EXPECT_EQ(query_param("/reprox/status?tokens=1", "token"), "");
  EXPECT_EQ(query_param("/reprox/status", "token"), "");
  EXPECT_EQ(query_param("/reprox/status?token", "token"), "");
  EXPECT_EQ(query_param("/reprox/status?token=%zz", "token"), "%zz");
}

}  // namespace
}  // namespace reprox
