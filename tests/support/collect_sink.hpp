#pragma once
// A GenerationSink for backend tests: records events, usage and errors, and
// fulfils `done` once (true: complete, false: error).
#include <future>
#include <string>
#include <vector>

#include "common/generation_sink.hpp"

namespace reprox::testing_support {

class CollectSink final : public GenerationSink {
 public:
  void on_event(GenEvent e) override { events.push_back(std::move(e)); }
  void on_complete(const Usage& u, const std::string& fp) override {
    usage = u;
    fingerprint = fp;
    done.set_value(true);
  }
  void on_error(const api::ApiError& e) override {
    error = e;
    done.set_value(false);
  }

  std::string text(uint32_t choice = 0) const {
    std::string t;
    for (const auto& e : events)
      if (e.choice == choice) t += e.delta.content;
    return t;
  }
  // Every bit the client sees of the answer, in stream order.
  std::string transcript() const {
    std::string t;
    for (const auto& e : events)
      t += std::to_string(e.choice) + "|" + e.delta.content + "|" + e.delta.logprobs + "|" + e.finish_reason + "\n";
    return t + "usage " + std::to_string(usage.prompt_tokens) + " " + std::to_string(usage.completion_tokens);
  }

  std::vector<GenEvent> events;
  Usage usage;
  std::string fingerprint;
  api::ApiError error;
  std::promise<bool> done;
  bool ok = false;
};

}  // namespace reprox::testing_support
