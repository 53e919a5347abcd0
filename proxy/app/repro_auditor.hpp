// Reproducibility audits: one cache hit in `every` is generated again in the
// background, without the cache, and compared with the cached answer
// (policy::same_answer). reprox_repro_audits_total{result="match|mismatch"}
// counts the outcomes; a mismatch is also logged with the key. The client's
// hit is answered from the cache as usual and never waits for its audit.
//
// Bounded: at most `max_in_flight` audits run at once; a hit picked while
// that many run is not audited. Audits that fail or are cancelled (backend
// error, shutdown) count as neither. Thread-safe: pick and audit may be
// called from any I/O thread. Destroy before the backend: running audits
// are cancelled.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "policies/audit.hpp"
#include "proxy/app/audit_sampler.hpp"
#include "proxy/backend/backend.hpp"
#include "proxy/cache/single_flight.hpp"
#include "proxy/metrics/metrics.hpp"

namespace reprox {

struct ReproAuditOptions {
  uint64_t every = 0;        // audit one hit in this many; 0: never
  size_t max_in_flight = 1;  // audits generating at once
  // Every counted outcome, with the resolved model id (the greedy
  // fallback's evidence). May run on a backend thread.
  std::function<void(const std::string& model, bool mismatch)> on_result;
};

class ReproAuditor {
 public:
  // `registry`: where audit flights report their end (never joined: their
  // keys end in ":audit"); it must outlive the backend's threads.
  ReproAuditor(ReproAuditOptions options, Backend& backend, Metrics& metrics, SingleFlight& registry);
  ~ReproAuditor();

  // Called for every cache hit: true for the one hit in `every` to audit.
  bool pick() { return sampler_.pick(); }
  // Audits a picked hit in the background (unless `max_in_flight` audits
  // run already). `request` is what a miss of this key would send to the
  // backend.
  void audit(const std::string& key, std::shared_ptr<const BackendRequest> request,
             std::shared_ptr<const Generation> cached);


 private:
  struct Audit {
    std::shared_ptr<Flight> flight;
    // Set by the flight's on_finish, which may run on a backend thread even
    // after this auditor is gone: it touches nothing else.
    std::shared_ptr<std::atomic<bool>> finished;
  };
  void drop_finished_locked();

  const ReproAuditOptions options_;
  Backend& backend_;
  Metrics& metrics_;
  AuditSampler sampler_;
  SingleFlight& registry_;
  mutable std::mutex mutex_;
  std::vector<Audit> audits_;  // <= max_in_flight
};

}  // namespace reprox
