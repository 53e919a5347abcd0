// IoPool: one io_context per I/O thread.
#include "proxy/server/io_pool.hpp"

#include <gtest/gtest.h>

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <mutex>
#include <set>
#include <thread>

namespace reprox {
namespace {

TEST(IoPool, NextVisitsEveryContextRoundRobin) {
  IoPool pool(3);
  ASSERT_EQ(pool.size(), 3u);
  std::set<boost::asio::io_context*> seen;
  boost::asio::io_context* first = &pool.next();
  seen.insert(first);
  seen.insert(&pool.next());
  seen.insert(&pool.next());
  EXPECT_EQ(seen.size(), 3u);
  EXPECT_EQ(&pool.next(), first);
  EXPECT_EQ(&pool.main(), first);
}

TEST(IoPool, AtLeastOneContext) {
  IoPool pool(0);
  EXPECT_EQ(pool.size(), 1u);
}

// Each context runs on its own thread, context 0 on the caller's; run()
// waits for stop() even when no work is queued, then joins every thread.
TEST(IoPool, EachContextRunsOnItsOwnThreadUntilStop) {
  IoPool pool(3);
  std::mutex mu;
  std::set<std::thread::id> threads;
  std::atomic<int> ran{0};
  boost::asio::io_context* contexts[3] = {&pool.next(), &pool.next(), &pool.next()};
  for (auto* c : contexts) {
    boost::asio::post(*c, [&] {
      std::lock_guard<std::mutex> lock(mu);
      threads.insert(std::this_thread::get_id());
      ++ran;
    });
  }
  // Stop from a handler on another context, after a pause in which idle
  // contexts would have returned from run() without their work guards.
  boost::asio::steady_timer timer(*contexts[1], std::chrono::milliseconds(50));
  timer.async_wait([&](boost::system::error_code) { pool.stop(); });
  const auto caller = std::this_thread::get_id();
  pool.run();
  EXPECT_EQ(ran.load(), 3);
  EXPECT_EQ(threads.size(), 3u);
  EXPECT_EQ(threads.count(caller), 1u);
}

// Another thread (a store worker, the engine) may post to any context.
TEST(IoPool, ForeignThreadsMayPostToAnyContext) {
  IoPool pool(2);
  std::atomic<int> ran{0};
  std::thread poster([&] {
    for (int i = 0; i < 1000; ++i) boost::asio::post(pool.next(), [&] { ++ran; });
    boost::asio::post(pool.main(), [&] {
      // Posted after the others: stop once they have all run.
      while (ran.load() < 1000) std::this_thread::yield();
      pool.stop();
    });
  });
  pool.run();
  poster.join();
  EXPECT_EQ(ran.load(), 1000);
}

}  // namespace
}  // namespace reprox
