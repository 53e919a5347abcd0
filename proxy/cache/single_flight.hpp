// Single-flight: concurrent identical requests share one generation.
//
// A Flight is the backend's sink for one generation. It records every event
// and lets any number of readers follow it from the start, including
// readers that join mid-stream. Readers are pulled, not pushed: a reader is
// told "something changed" (at most one pending notice per reader) and then
// copies the new events itself, so no per-reader queue can grow.
//
// Lifetime: a flight is registered in SingleFlight under its key while it
// runs. On completion it hands the finished Generation to `on_complete`
// (the cache write) before it leaves the registry, so a request arriving in
// between finds either the flight or the cache entry. When its last reader
// leaves before completion, the generation is cancelled (the backend handle
// is dropped) and nothing is stored.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/api_error.hpp"
#include "common/generation.hpp"
#include "common/generation_sink.hpp"

namespace reprox {

class SingleFlight;

enum class FlightState { running, complete, failed, cancelled };

class Flight final : public GenerationSink, public std::enable_shared_from_this<Flight> {
 public:
  using Notify = std::function<void()>;  // may be called on any thread
  using CompleteFn = std::function<void(std::shared_ptr<const Generation>)>;

  Flight(std::string key, std::string model, std::string ns, uint32_t n_choices, SingleFlight* registry,
         CompleteFn on_complete);
  ~Flight() override;

  // Readers. subscribe() returns a reader id; the notice fires after every
  // change until unsubscribe(). The last unsubscribe of a running flight
  // cancels it.
  uint64_t subscribe(Notify notify);
  void unsubscribe(uint64_t reader);

  struct Read {
    FlightState state = FlightState::running;
    size_t next = 0;  // index after the last event copied
  };
  // Copies events [from, end) into `out` (appending).
  Read read(size_t from, std::vector<GenEvent>& out) const;
  // The state and event count, copying nothing.
  Read status() const;
  std::shared_ptr<const Generation> result() const;  // set when complete
  // Seconds from the flight's start to its first event; negative if none yet.
  double time_to_first_event() const;
  api::ApiError error() const;                       // set when failed
  const std::string& key() const { return key_; }

  // Runs once when the flight ends in any state (after the cache write of a
  // completion); set before the backend starts. Any thread.
  void set_on_finish(std::function<void()> fn) { on_finish_ = std::move(fn); }

  // Takes ownership of the backend's handle (dropping it cancels).
  void attach(std::unique_ptr<GenerationHandle> handle);

  // GenerationSink (backend threads).
  void on_event(GenEvent event) override;
  void on_complete(const Usage& usage, const std::string& system_fingerprint) override;
  void on_error(const api::ApiError& error) override;

 private:
  void notify_all();

  const std::string key_;
  SingleFlight* const registry_;  // outlives every flight
  CompleteFn on_complete_;
  std::function<void()> on_finish_;

  mutable std::mutex mutex_;
  FlightState state_ = FlightState::running;
  bool completing_ = false;  // on_complete is storing the result: no other transition
  const std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  double first_event_seconds_ = -1;
  std::shared_ptr<Generation> gen_;
  std::shared_ptr<const Generation> result_;
  api::ApiError error_;
  std::unique_ptr<GenerationHandle> handle_;
  std::vector<std::pair<uint64_t, Notify>> readers_;
  uint64_t next_reader_ = 1;
};

class SingleFlight {
 public:
  // Returns the running flight for `key`, or creates one with `make` and
  // reports leader = true; the leader then starts the backend.
  struct Join {
    std::shared_ptr<Flight> flight;
    bool leader = false;
  };
  Join join(const std::string& key, const std::function<std::shared_ptr<Flight>()>& make);
  size_t in_flight() const;

 private:
  friend class Flight;
  void remove(const std::string& key, const Flight* flight);

  mutable std::mutex mutex_;
  std::unordered_map<std::string, std::weak_ptr<Flight>> flights_;
};

}  // namespace reprox
