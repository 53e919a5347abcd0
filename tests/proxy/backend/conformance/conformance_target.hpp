// What a Backend implementation provides to run the conformance suite
// (backend_conformance_test.cpp). Adding an implementation: write a
// ConformanceTarget for it and one line
//   INSTANTIATE_TEST_SUITE_P(Name, BackendConformance,
//       ::testing::Values(TargetParam{"name", &make_name_target}), target_name);
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <ostream>
#include <string>

#include <gtest/gtest.h>

#include "proxy/backend/backend.hpp"

namespace reprox::testing {

enum class Scenario {
  normal,              // one choice, a short complete answer
  two_choices,         // n = 2
  long_stream,         // many events over seconds (for cancellation)
  first_byte_timeout,  // the generator never starts answering in time
  cut_stream,          // output stops mid-way (connection cut)
  server_error,        // the generator fails (an upstream's 500)
  rate_limited,        // an upstream's 429 with an error body
  unreachable,         // the generator cannot be reached (connection refused)
};

class ConformanceTarget {
 public:
  virtual ~ConformanceTarget() = default;
  // Empty when the target is usable, else why not (the test fails).
  virtual std::string setup_error() const { return ""; }
  // The backend to use for `scenario` (targets may need differently
  // configured instances, e.g. short timeouts).
  virtual Backend& backend(Scenario scenario) = 0;
  // A request that produces `scenario`, or nullopt when this implementation
  // cannot be driven into it (the test is skipped).
  virtual std::optional<BackendRequest> request_for(Scenario scenario, uint64_t seed) = 0;
  // The exact text choice `choice` must produce, when the target knows it.
  virtual std::optional<std::string> expected_text(const BackendRequest& request,
                                                   uint32_t choice) const = 0;
  // After a cancelled long_stream: whether the generator saw the cancel
  // within `wait` (an upstream saw its connection closed); nullopt when the
  // target cannot observe it.
  virtual std::optional<bool> generator_saw_cancel(std::chrono::milliseconds wait) = 0;
};

using TargetFactory = std::unique_ptr<ConformanceTarget> (*)();

struct TargetParam {
  const char* name;
  TargetFactory make;
};

inline void PrintTo(const TargetParam& param, std::ostream* os) { *os << param.name; }

// For INSTANTIATE_TEST_SUITE_P's name generator.
inline std::string target_name(const ::testing::TestParamInfo<TargetParam>& info) {
  return info.param.name;
}

}  // namespace reprox::testing
