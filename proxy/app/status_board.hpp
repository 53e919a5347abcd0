// What the status page shows (GET /reprox/v1/stats, GET /reprox/status):
// the last chat requests (RecentRequests) and sliding windows over the
// request and token counters (StatsWindow), rendered with the state the
// process already keeps: the Metrics object, the memory store, the Redis
// tier's background count, the engine's published KV and batch figures,
// the greedy fallback.
//
// Contract: stats_json() never waits on Redis or the engine. It refreshes
// the gauges the way a /metrics scrape does (memory tier, the
// shared_tier_scrape and before_scrape hooks), then reads Metrics. Windows
// are the last 1, 5 and 15 minutes; their counts come from samples of the
// counters taken every 2 s by start()'s timer, compared with the live
// totals. The JSON shape is in docs/interface.md ("Status page").
//
// Threading: record() and stats_json() from any thread; start() once,
// before the io_context runs; the timer's handler runs on that io_context.
// The board must outlive that io_context's run() and `app`'s users.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "proxy/app/app_context.hpp"
#include "proxy/app/recent_requests.hpp"
#include "proxy/app/stats_window.hpp"

namespace reprox {

class StatusBoard {
 public:
  static constexpr std::chrono::seconds kSampleInterval{2};
  static constexpr double kLongestWindowS = 900;

  // `app.metrics` must be set; the board reads `app`'s hooks at each call.
  explicit StatusBoard(AppContext& app);
  ~StatusBoard();
  StatusBoard(const StatusBoard&) = delete;
  StatusBoard& operator=(const StatusBoard&) = delete;

  // Samples the counters every kSampleInterval on `io`.
  void start(net::io_context& io);

  // One chat request, answered or refused (request_log.cpp). `arrived` is
  // turned into unix time with the offset of the last sample, which spares
  // the hit path a read of the system clock.
  void record(std::chrono::steady_clock::time_point arrived, double latency_ms, std::string_view tenant,
              std::string_view key, int status, std::string_view cache, std::string_view tier) {
    const int64_t steady_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(arrived.time_since_epoch()).count();
    recent_.record(steady_ms + unix_offset_ms_.load(std::memory_order_relaxed), latency_ms, tenant, key, status,
                   cache, tier);
  }

  std::string stats_json();

  // Takes a sample now (the timer's work; tests call it directly).
  void sample();

 private:
  double now_s() const;
  StatsSample sample_of(const Metrics::Readout& m) const;
  void update_unix_offset();
  void arm();

  AppContext& app_;
  const std::chrono::steady_clock::time_point started_;
  RecentRequests recent_;
  std::atomic<int64_t> unix_offset_ms_{0};  // unix ms minus steady ms, as of the last sample
  std::mutex mutex_;  // guards window_
  StatsWindow window_;
  std::unique_ptr<net::steady_timer> timer_;
};

}  // namespace reprox
