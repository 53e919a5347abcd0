#include "proxy/cache/single_flight.hpp"

#include <algorithm>

#include "proxy/cache/cache_store.hpp"

namespace reprox {

Flight::Flight(std::string key, std::string model, std::string ns, uint32_t n_choices, SingleFlight* registry,
               CompleteFn on_complete)
    : key_(std::move(key)), registry_(registry), on_complete_(std::move(on_complete)),
      gen_(std::make_shared<Generation>()) {
  gen_->model = std::move(model);
  gen_->ns = std::move(ns);
  gen_->n_choices = n_choices;
}

Flight::~Flight() = default;

uint64_t Flight::subscribe(Notify notify) {
  std::lock_guard lock(mutex_);
  uint64_t id = next_reader_++;
  readers_.emplace_back(id, std::move(notify));
  return id;
}

void Flight::unsubscribe(uint64_t reader) {
  std::unique_ptr<GenerationHandle> cancelled;
  bool remove = false;
  {
    std::lock_guard lock(mutex_);
    readers_.erase(std::remove_if(readers_.begin(), readers_.end(),
                                  [&](const auto& r) { return r.first == reader; }),
                   readers_.end());
    if (readers_.empty() && state_ == FlightState::running && !completing_) {
      state_ = FlightState::cancelled;
      cancelled = std::move(handle_);
      remove = true;
    }
  }
  if (remove) registry_->remove(key_, this);
  cancelled.reset();  // cancels the backend outside our lock
  if (remove && on_finish_) on_finish_();
}

Flight::Read Flight::read(size_t from, std::vector<GenEvent>& out) const {
  std::lock_guard lock(mutex_);
  const auto& events = result_ ? result_->events : gen_->events;
  for (size_t i = from; i < events.size(); ++i) out.push_back(events[i]);
  return Read{state_, events.size()};
}

Flight::Read Flight::status() const {
  std::lock_guard lock(mutex_);
  return Read{state_, result_ ? result_->events.size() : gen_->events.size()};
}

std::shared_ptr<const Generation> Flight::result() const {
  std::lock_guard lock(mutex_);
  return result_;
}

double Flight::time_to_first_event() const {
  std::lock_guard lock(mutex_);
  return first_event_seconds_;
}

api::ApiError Flight::error() const {
  std::lock_guard lock(mutex_);
  return error_;
}

void Flight::attach(std::unique_ptr<GenerationHandle> handle) {
  std::unique_ptr<GenerationHandle> late;
  {
    std::lock_guard lock(mutex_);
    if (state_ == FlightState::running)
      handle_ = std::move(handle);
    else if (state_ == FlightState::cancelled)
      late = std::move(handle);  // everybody left already: cancel now
    // complete/failed: the handle is finished; dropping it is harmless
  }
  late.reset();
}

void Flight::on_event(GenEvent event) {
  {
    std::lock_guard lock(mutex_);
    if (state_ != FlightState::running || completing_) return;
    if (gen_->events.empty())
      first_event_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    gen_->events.push_back(std::move(event));
  }
  notify_all();
}

void Flight::on_complete(const Usage& usage, const std::string& system_fingerprint) {
  std::shared_ptr<const Generation> done;
  {
    std::lock_guard lock(mutex_);
    if (state_ != FlightState::running || completing_) return;
    gen_->usage = usage;
    gen_->system_fingerprint = system_fingerprint;
    gen_->created_unix_ms = now_unix_ms();
    if (!gen_->complete()) {
      state_ = FlightState::failed;
      error_ = api::ApiError{502, "the backend ended the generation before every choice finished",
                             "upstream_error", "", "incomplete_generation"};
    } else {
      completing_ = true;  // still "running" to readers until it is stored and unregistered
      done = gen_;
    }
    handle_.reset();
  }
  // Store first, then leave the registry, then show the flight complete: a
  // request arriving meanwhile finds the flight (and its result) or the
  // cache entry, never neither; and a reader that sees it complete (and
  // ends its answer) cannot send a request that joins it again.
  if (done && on_complete_) on_complete_(done);
  registry_->remove(key_, this);
  if (done) {
    std::lock_guard lock(mutex_);
    state_ = FlightState::complete;
    result_ = done;
  }
  if (on_finish_) on_finish_();
  notify_all();
}

void Flight::on_error(const api::ApiError& error) {
  {
    std::lock_guard lock(mutex_);
    if (state_ != FlightState::running || completing_) return;
    state_ = FlightState::failed;
    error_ = error;
    handle_.reset();
  }
  registry_->remove(key_, this);
  if (on_finish_) on_finish_();
  notify_all();
}

void Flight::notify_all() {
  std::vector<Notify> targets;
  {
    std::lock_guard lock(mutex_);
    targets.reserve(readers_.size());
    for (const auto& r : readers_) targets.push_back(r.second);
  }
  for (const auto& n : targets) n();
}

SingleFlight::Join SingleFlight::join(const std::string& key,
                                      const std::function<std::shared_ptr<Flight>()>& make) {
  std::lock_guard lock(mutex_);
  auto& slot = flights_[key];
  if (auto existing = slot.lock()) return Join{existing, false};
  auto flight = make();
  slot = flight;
  return Join{flight, true};
}

size_t SingleFlight::in_flight() const {
  std::lock_guard lock(mutex_);
  return flights_.size();
}

void SingleFlight::remove(const std::string& key, const Flight* flight) {
  std::lock_guard lock(mutex_);
  auto it = flights_.find(key);
  if (it == flights_.end()) return;
  auto current = it->second.lock();
  if (!current || current.get() == flight) flights_.erase(it);
}

}  // namespace reprox
