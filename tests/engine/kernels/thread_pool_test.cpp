// kernels::parallel_for (the kernels' thread pool): every task runs exactly
// once per call, across many back-to-back calls with varying task counts,
// thread counts, calls from several threads at once, and calls made after the
// workers have gone to sleep.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "tests/engine/kernels/test_util.hpp"

namespace reprox::kernels::test {
namespace {

void expect_each_task_once(int tasks) {
  std::vector<std::atomic<int>> hits(static_cast<size_t>(tasks));
  parallel_for(tasks, [&](int i) { hits[static_cast<size_t>(i)].fetch_add(1); });
  for (int i = 0; i < tasks; ++i) ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1) << "task " << i << " of " << tasks;
}

TEST(ThreadPool, EveryTaskRunsOnceAcrossManyCalls) {
  SettingsGuard guard;
  for (int threads : {1, 2, 3, 5}) {
    set_num_threads(threads);
    for (int call = 0; call < 3000; ++call) expect_each_task_once(1 + call % 37);
  }
}

TEST(ThreadPool, WakesSleepingWorkers) {
  SettingsGuard guard;
  set_num_threads(3);
  for (int round = 0; round < 5; ++round) {
    std::this_thread::sleep_for(std::chrono::milliseconds(3));  // past the spin: workers sleep
    expect_each_task_once(64);
  }
}

TEST(ThreadPool, CallsFromSeveralThreadsAreSerialized) {
  SettingsGuard guard;
  set_num_threads(2);
  std::atomic<int> inside{0}, overlap{0}, done{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 4; ++c) {
    callers.emplace_back([&] {
      for (int call = 0; call < 500; ++call) {
        std::atomic<int> ran{0};
        parallel_for(8, [&](int) {
          if (inside.fetch_add(1) >= 2) overlap.fetch_add(1);  // at most one task per thread at a time
          ran.fetch_add(1);
          inside.fetch_sub(1);
        });
        if (ran.load() == 8) done.fetch_add(1);
      }
    });
  }
  for (std::thread& t : callers) t.join();
  EXPECT_EQ(done.load(), 4 * 500);
  EXPECT_EQ(overlap.load(), 0);
}

}  // namespace
}  // namespace reprox::kernels::test
