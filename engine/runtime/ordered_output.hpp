// One request's events, delivered to its sink in the order a one-at-a-time
// engine produces them: every event of choice 0, then of choice 1, ... The
// batch runs a request's choices side by side; events of a later choice wait
// here until the earlier choices have finished, so a streamed answer's bytes
// never depend on how the scheduler interleaved its choices.
//
// Bound: a waiting choice buffers at most max_tokens + 1 events (one per
// sampled token plus its finish). Torch-free; used by the engine thread only.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "common/generation.hpp"
#include "engine/runtime/engine_job.hpp"

namespace reprox::engine {

class OrderedOutput {
 public:
  OrderedOutput(std::shared_ptr<EngineSink> sink, uint32_t choices);

  // An event of `choice`; sent now when every earlier choice has finished.
  void event(uint32_t choice, GenEvent event);
  // `choice` sent its last event; flushes the choices it was holding back.
  void finish_choice(uint32_t choice);
  bool all_finished() const { return next_ == finished_.size(); }

  // The request's end: on_complete once every choice finished, or on_error
  // at any time; the first of them wins and later calls do nothing.
  void complete(const Usage& usage, const std::string& system_fingerprint);
  void fail(const EngineError& error);
  bool closed() const { return closed_; }

 private:
  void flush();

  std::shared_ptr<EngineSink> sink_;
  std::vector<std::deque<GenEvent>> held_;
  std::vector<bool> finished_;
  size_t next_ = 0;  // the choice whose events go straight to the sink
  bool closed_ = false;
};

}  // namespace reprox::engine
