// The conformance suite's fixture; the TEST_Ps are in
// backend_conformance_test.cpp, the instantiations next to each target.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <thread>

#include "tests/proxy/backend/conformance/conformance_target.hpp"
#include "tests/proxy/backend/conformance/recording_sink.hpp"

namespace reprox::testing {

class BackendConformance : public ::testing::TestWithParam<TargetParam> {
 protected:
  void SetUp() override {
    target_ = GetParam().make();
    ASSERT_TRUE(target_);
    ASSERT_EQ(target_->setup_error(), "");
  }

  // Builds the scenario's request (skipping when the target cannot) and runs
  // it to its end.
  struct Run {
    std::shared_ptr<RecordingSink> sink = std::make_shared<RecordingSink>();
    std::unique_ptr<GenerationHandle> handle;
    std::shared_ptr<const BackendRequest> request;
  };
  std::optional<Run> start(Scenario scenario, uint64_t seed = 1234) {
    auto request = target_->request_for(scenario, seed);
    if (!request) return std::nullopt;
    Run run;
    run.request = std::make_shared<const BackendRequest>(std::move(*request));
    api::ApiError refused;
    run.handle = target_->backend(scenario).generate(run.request, run.sink, &refused);
    EXPECT_TRUE(run.handle) << refused.message;
    return run;
  }

  // The well-formedness every successful generation must have.
  void expect_complete(const Run& run) {
    const RecordingSink& sink = *run.sink;
    ASSERT_TRUE(run.sink->wait_end());
    EXPECT_EQ(sink.errors(), 0) << sink.error().message;
    EXPECT_EQ(sink.completes(), 1);
    uint32_t n = static_cast<uint32_t>(run.request->chat.n);
    for (uint32_t i = 0; i < n; ++i) {
      EXPECT_EQ(sink.finish_reasons(i).size(), 1u) << "choice " << i;
      EXPECT_TRUE(sink.last_event_finishes(i)) << "choice " << i;
      if (auto expected = target_->expected_text(*run.request, i))
        EXPECT_EQ(sink.text(i), *expected) << "choice " << i;
      else
        EXPECT_FALSE(sink.text(i).empty()) << "choice " << i;
    }
    for (const auto& ev : sink.events()) EXPECT_LT(ev.choice, n);
    EXPECT_GT(sink.usage().completion_tokens, 0);
    EXPECT_FALSE(sink.overlapped());
  }

  void expect_error(const Run& run, int status) {
    ASSERT_TRUE(run.sink->wait_end());
    EXPECT_EQ(run.sink->completes(), 0);
    EXPECT_EQ(run.sink->errors(), 1);
    EXPECT_EQ(run.sink->error().status, status) << run.sink->error().message;
    EXPECT_FALSE(run.sink->error().message.empty());
  }

  // Nothing may arrive once the generation ended.
  void expect_quiet_after_end(const Run& run) {
    int calls = run.sink->calls();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    EXPECT_EQ(run.sink->calls(), calls);
    EXPECT_EQ(run.sink->calls_after_end(), 0);
  }

  std::unique_ptr<ConformanceTarget> target_;
};

}  // namespace reprox::testing
