// How a generation's output reaches its consumer, whoever produces it (the
// embedded engine through its adapter, or an upstream server).
#pragma once

#include <string>

#include "common/api_error.hpp"
#include "common/generation.hpp"

namespace reprox {

// Receives one generation's output. Calls for one generation come from one
// producer thread at a time, in order; they may come on any thread, so an
// implementation posts to its own executor. After on_complete or on_error
// no further call is made.
class GenerationSink {
 public:
  virtual ~GenerationSink() = default;
  virtual void on_event(GenEvent event) = 0;
  // Every choice has finished. `system_fingerprint` may differ from the
  // backend's advertised one only for upstreams that report their own.
  virtual void on_complete(const Usage& usage, const std::string& system_fingerprint) = 0;
  virtual void on_error(const api::ApiError& error) = 0;
};

// Dropping the handle cancels the generation. The sink may still receive
// calls that were already under way; it must stay valid (it is shared).
class GenerationHandle {
 public:
  virtual ~GenerationHandle() = default;
};

}  // namespace reprox
