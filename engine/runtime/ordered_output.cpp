#include "engine/runtime/ordered_output.hpp"

namespace reprox::engine {

OrderedOutput::OrderedOutput(std::shared_ptr<EngineSink> sink, uint32_t choices)
    : sink_(std::move(sink)), held_(choices == 0 ? 1 : choices), finished_(held_.size(), false) {}

void OrderedOutput::event(uint32_t choice, GenEvent event) {
  if (closed_ || choice >= held_.size() || finished_[choice]) return;
  if (choice == next_) {
    sink_->on_event(std::move(event));
  } else {
    held_[choice].push_back(std::move(event));
  }
}

void OrderedOutput::finish_choice(uint32_t choice) {
  if (choice >= finished_.size()) return;
  finished_[choice] = true;
  flush();
}

void OrderedOutput::flush() {
  while (next_ < finished_.size()) {
    if (!closed_) {
      for (GenEvent& e : held_[next_]) sink_->on_event(std::move(e));
    }
    held_[next_].clear();
    if (!finished_[next_]) return;  // its later events go straight through
    ++next_;
  }
}

void OrderedOutput::complete(const Usage& usage, const std::string& system_fingerprint) {
  if (closed_) return;
  closed_ = true;
  sink_->on_complete(usage, system_fingerprint);
}

void OrderedOutput::fail(const EngineError& error) {
  if (closed_) return;
  closed_ = true;
  for (auto& h : held_) h.clear();
  sink_->on_error(error);
}

}  // namespace reprox::engine
