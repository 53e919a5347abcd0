// RedisIoChannel against a real redis-server: pipelining and reply order,
// AUTH/SELECT/unix sockets, deadlines while Redis is paused, reconnects
// after a restart, the pending bound and close().
#include <gtest/gtest.h>

#include <atomic>
#include <future>

#include "proxy/cache/redis/redis_io_channel.hpp"
#include "tests/proxy/cache/redis/io_thread.hpp"
#include "tests/proxy/cache/redis/redis_server.hpp"

namespace reprox {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

RedisEndpoint endpoint_of(const std::string& url) {
  std::string error;
  auto ep = parse_redis_url(url, &error);
  EXPECT_TRUE(ep) << error;
  return ep ? *ep : RedisEndpoint{};
}

struct ChannelFixture {
  explicit ChannelFixture(RedisEndpoint ep, size_t max_pending = 1024, BreakerOptions breaker_options = {})
      : breaker(breaker_options) {
    RedisIoChannelOptions o;
    o.endpoint = std::move(ep);
    o.timeouts.connect = 200ms;
    o.timeouts.command = 50ms;
    o.max_pending = max_pending;
    o.reconnect_min = 20ms;
    o.reconnect_max = 100ms;
    channel = RedisIoChannel::create(io.io(), o, breaker);
  }
  ~ChannelFixture() {
    io.call([this] {
      channel->close();
      return 0;
    });
  }
  // Polls try_ready() on the I/O thread (which also starts reconnects).
  bool wait_ready(std::chrono::milliseconds limit = 3000ms) {
    auto until = Clock::now() + limit;
    while (Clock::now() < until) {
      if (io.call([this] { return channel->try_ready(); })) return true;
      std::this_thread::sleep_for(5ms);
    }
    return false;
  }
  // Sends one command from the I/O thread; the future gets its result.
  std::future<RedisIoResult> send(RedisArgv argv, std::chrono::milliseconds deadline = 2000ms) {
    auto promise = std::make_shared<std::promise<RedisIoResult>>();
    auto future = promise->get_future();
    bool sent = io.call([&] {
      if (!channel->try_ready()) return false;
      channel->send(argv, Clock::now() + deadline, [promise](RedisIoResult& r) { promise->set_value(std::move(r)); });
      return true;
    });
    if (!sent) promise->set_value(RedisIoResult{false, "not ready", {}});
    return future;
  }

  CircuitBreaker breaker;
  testing::IoThread io;
  std::shared_ptr<RedisIoChannel> channel;
};

RedisIoResult get_result(std::future<RedisIoResult>& f, std::chrono::milliseconds limit = 3000ms) {
  if (f.wait_for(limit) != std::future_status::ready) {
    ADD_FAILURE() << "no answer within " << limit.count() << " ms";
    return {};
  }
  return f.get();
}

TEST(RespCommand, EncodesArraysOfBulkStrings) {
  std::string out;
  append_resp_command(out, {"GET", "k"});
  EXPECT_EQ(out, "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n");
  out.clear();
  append_resp_command(out, {"SET", std::string("a\0\r\nb", 5), ""});
  EXPECT_EQ(out, std::string("*3\r\n$3\r\nSET\r\n$5\r\na\0\r\nb\r\n$0\r\n\r\n", 30));
}

TEST(RedisIoChannel, PipelinesCommandsAndAnswersInOrderOnItsThread) {
  testing::RedisServer server;
  ChannelFixture f(endpoint_of(server.url()));
  ASSERT_TRUE(f.wait_ready());
  constexpr int kN = 200;
  std::vector<RedisIoResult> results(kN);
  std::atomic<int> answered{0};
  std::atomic<bool> off_thread{false};
  std::promise<void> all;
  f.io.call([&] {
    EXPECT_TRUE(f.channel->try_ready());
    for (int i = 0; i < kN; ++i) {
      RedisArgv cmd = i == 0 ? RedisArgv{"SET", "n", "0"} : RedisArgv{"INCR", "n"};
      f.channel->send(cmd, Clock::now() + 2s, [&, i](RedisIoResult& r) {
        if (std::this_thread::get_id() != f.io.id()) off_thread = true;
        results[size_t(i)] = std::move(r);
        if (++answered == kN) all.set_value();
      });
    }
    EXPECT_EQ(answered.load(), 0) << "answered inside send()";
    return 0;
  });
  ASSERT_EQ(all.get_future().wait_for(5s), std::future_status::ready);
  EXPECT_FALSE(off_thread.load());
  ASSERT_TRUE(results[0].ok) << results[0].error;
  EXPECT_EQ(results[0].reply.str, "OK");
  for (int i = 1; i < kN; ++i) {
    ASSERT_TRUE(results[size_t(i)].ok) << i << ": " << results[size_t(i)].error;
    EXPECT_EQ(results[size_t(i)].reply.integer, i) << "replies out of order at " << i;
  }
}

TEST(RedisIoChannel, RedisErrorRepliesAreValuesNotFailures) {
  testing::RedisServer server;
  ChannelFixture f(endpoint_of(server.url()));
  ASSERT_TRUE(f.wait_ready());
  auto bad = f.send({"NOSUCHCOMMAND"});
  auto after = f.send({"PING"});
  RedisIoResult r = get_result(bad);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_TRUE(r.reply.is_error());
  RedisIoResult p = get_result(after);
  ASSERT_TRUE(p.ok) << p.error;
  EXPECT_EQ(p.reply.str, "PONG");
}

TEST(RedisIoChannel, AuthenticatesAndSelectsTheDatabase) {
  testing::RedisServer server(testing::RedisServerOptions{"s3cret pass", false});
  ChannelFixture f(endpoint_of(server.url(3)));
  ASSERT_TRUE(f.wait_ready());
  auto set = f.send({"SET", "where", "db3"});
  ASSERT_TRUE(get_result(set).ok);
  EXPECT_EQ(server.command({"GET", "where"}, 3).str, "db3");
  EXPECT_TRUE(server.command({"GET", "where"}, 0).is_nil());
}

TEST(RedisIoChannel, AWrongPasswordNeverMakesItReady) {
  testing::RedisServer server(testing::RedisServerOptions{"right", false});
  RedisEndpoint ep = endpoint_of(server.url());
  ep.password = "wrong";
  ChannelFixture f(ep);
  EXPECT_FALSE(f.wait_ready(500ms));
}

TEST(RedisIoChannel, SpeaksOverAUnixSocket) {
  testing::RedisServer server(testing::RedisServerOptions{"", true});
  ChannelFixture f(endpoint_of("unix://" + server.socket_path()));
  ASSERT_TRUE(f.wait_ready());
  auto r = f.send({"ECHO", "over unix"});
  RedisIoResult res = get_result(r);
  ASSERT_TRUE(res.ok) << res.error;
  EXPECT_EQ(res.reply.str, "over unix");
}

TEST(RedisIoChannel, FailsCommandsPastTheirDeadlineWhileRedisIsPausedThenRecovers) {
  testing::RedisServer server;
  ChannelFixture f(endpoint_of(server.url()));
  ASSERT_TRUE(f.wait_ready());
  server.pause();
  auto start = Clock::now();
  auto late = f.send({"PING"}, 50ms);
  RedisIoResult r = get_result(late, 2000ms);
  auto took = Clock::now() - start;
  server.resume();
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, "timeout");
  // Bound, not speed: the deadline plus the sweep period plus scheduling slack.
  EXPECT_LT(took, 1000ms);
  ASSERT_TRUE(f.wait_ready());
  auto again = f.send({"PING"});
  RedisIoResult ok = get_result(again);
  EXPECT_TRUE(ok.ok) << ok.error;
}

TEST(RedisIoChannel, ReconnectsAfterRedisIsKilledAndRestarted) {
  testing::RedisServer server;
  ChannelFixture f(endpoint_of(server.url()));
  ASSERT_TRUE(f.wait_ready());
  server.pause();  // keeps the command pending until the kill
  auto pending = f.send({"PING"}, 5000ms);
  server.kill_hard();
  RedisIoResult r = get_result(pending);
  EXPECT_FALSE(r.ok);
  EXPECT_FALSE(f.io.call([&] { return f.channel->try_ready(); }));
  server.start();
  ASSERT_TRUE(f.wait_ready(5000ms));
  auto again = f.send({"PING"});
  RedisIoResult ok = get_result(again);
  EXPECT_TRUE(ok.ok) << ok.error;
}

TEST(RedisIoChannel, RefusesCommandsBeyondThePendingBound) {
  testing::RedisServer server;
  ChannelFixture f(endpoint_of(server.url()), 4);
  ASSERT_TRUE(f.wait_ready());
  std::atomic<int> answered{0};
  int accepted = f.io.call([&] {
    int n = 0;
    while (f.channel->try_ready() && n < 100) {
      f.channel->send({"PING"}, Clock::now() + 2s, [&](RedisIoResult&) { ++answered; });
      ++n;
    }
    return n;
  });
  EXPECT_EQ(accepted, 4);
  auto until = Clock::now() + 3s;
  while (answered < 4 && Clock::now() < until) std::this_thread::sleep_for(5ms);
  EXPECT_EQ(answered.load(), 4);
  EXPECT_TRUE(f.wait_ready());
}

TEST(RedisIoChannel, CloseFailsPendingCommandsAndRefusesNewOnes) {
  testing::RedisServer server;
  ChannelFixture f(endpoint_of(server.url()));
  ASSERT_TRUE(f.wait_ready());
  server.pause();
  auto pending = f.send({"PING"}, 5000ms);
  f.io.call([&] {
    f.channel->close();
    return 0;
  });
  RedisIoResult r = get_result(pending, 1000ms);
  server.resume();
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, "closed");
  EXPECT_FALSE(f.wait_ready(300ms));
}

TEST(RedisIoChannel, ALostConnectionCountsOnTheBreakerAndAnOpenBreakerStopsReconnects) {
  testing::RedisServer server;
  ChannelFixture f(endpoint_of(server.url()), 1024, BreakerOptions{1, 60s, 60s});
  ASSERT_TRUE(f.wait_ready());
  server.kill_hard();
  auto until = Clock::now() + 3s;
  while (f.breaker.state() != BreakerState::open && Clock::now() < until) std::this_thread::sleep_for(5ms);
  EXPECT_EQ(f.breaker.state(), BreakerState::open);
  server.start();
  EXPECT_FALSE(f.wait_ready(300ms)) << "reconnected while the breaker was open";
  f.breaker.on_success();  // as the executor's probe would
  EXPECT_TRUE(f.wait_ready());
}

}  // namespace
}  // namespace reprox
