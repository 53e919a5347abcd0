#include "proxy/server/io_pool.hpp"

#include <algorithm>
#include <pthread.h>
#include <thread>

namespace reprox {

IoPool::IoPool(int threads) {
  const int n = std::max(1, threads);
  for (int i = 0; i < n; ++i) {
    // Hint 1: one thread runs it (other threads still post to it, so the
    // scheduler keeps its locking).
    contexts_.push_back(std::make_unique<boost::asio::io_context>(1));
    guards_.emplace_back(boost::asio::make_work_guard(*contexts_.back()));
  }
}

boost::asio::io_context& IoPool::next() {
  return *contexts_[next_.fetch_add(1, std::memory_order_relaxed) % contexts_.size()];
}

std::vector<boost::asio::io_context*> IoPool::contexts() const {
  std::vector<boost::asio::io_context*> out;
  for (const auto& c : contexts_) out.push_back(c.get());
  return out;
}

void IoPool::run() {
  std::vector<std::thread> threads;
  for (size_t i = 1; i < contexts_.size(); ++i)
    threads.emplace_back([c = contexts_[i].get()] {
      pthread_setname_np(pthread_self(), "reprox-io");  // for top -H and per-thread CPU figures
      c->run();
    });
  contexts_.front()->run();
  for (auto& t : threads) t.join();
}

void IoPool::stop() {
  for (auto& c : contexts_) c->stop();
}

void IoPool::finish(std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  guards_.clear();  // nothing waits for more work now
  for (int idle_rounds = 0; idle_rounds < 3 && std::chrono::steady_clock::now() < deadline;) {
    size_t ran = 0;
    for (auto& c : contexts_) {
      c->restart();
      ran += c->poll();
    }
    if (ran == 0) {
      ++idle_rounds;  // a close may still be on its way to another context
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    } else {
      idle_rounds = 0;
    }
  }
}

}  // namespace reprox
