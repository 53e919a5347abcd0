#include "proxy/app/repro_auditor.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace reprox {

ReproAuditor::ReproAuditor(ReproAuditOptions options, Backend& backend, Metrics& metrics, SingleFlight& registry)
    : options_(options), backend_(backend), metrics_(metrics), sampler_(options.every), registry_(registry) {}

ReproAuditor::~ReproAuditor() {
  std::vector<Audit> audits;
  {
    std::lock_guard lock(mutex_);
    audits.swap(audits_);
  }
  // Dropping the flights drops their backend handles: the generations stop.
}

// A flight is destroyed here, on a later call, never inside its own callbacks.
void ReproAuditor::drop_finished_locked() {
  audits_.erase(std::remove_if(audits_.begin(), audits_.end(), [](const Audit& a) { return a.finished->load(); }),
                audits_.end());
}

void ReproAuditor::audit(const std::string& key, std::shared_ptr<const BackendRequest> request,
                         std::shared_ptr<const Generation> cached) {
  if (!cached) return;
  std::shared_ptr<Flight> flight;
  auto finished = std::make_shared<std::atomic<bool>>(false);
  {
    std::lock_guard lock(mutex_);
    drop_finished_locked();
    if (audits_.size() >= options_.max_in_flight) return;
    Metrics* metrics = &metrics_;
    auto on_result = options_.on_result;
    flight = std::make_shared<Flight>(
        key + ":audit", cached->model, cached->ns, cached->n_choices, &registry_,
        [metrics, cached, key, on_result, model = request->model_id](std::shared_ptr<const Generation> again) {
          std::string why;
          const bool match = policy::same_answer(*cached, *again, &why);
          metrics->audit(match);
          if (on_result) on_result(model, !match);
          if (!match) spdlog::warn("reproducibility audit: key {} regenerated differently ({})", key, why);
        });
    flight->set_on_finish([finished] { finished->store(true); });
    audits_.push_back(Audit{flight, finished});
  }
  api::ApiError error;
  auto handle = backend_.generate(std::move(request), flight, &error);
  if (!handle) {
    flight->on_error(error);  // refused (queue full, ...): not counted
    return;
  }
  flight->attach(std::move(handle));
}

}  // namespace reprox
