// The Backend contract, checked the same way for every implementation (see
// conformance_target.hpp for how one is plugged in).
#include <gtest/gtest.h>

#include <thread>

#include "tests/proxy/backend/conformance/backend_conformance.hpp"

namespace reprox::testing {
namespace {

using namespace std::chrono_literals;

#define START_OR_SKIP(run, ...)                                              \
  auto run = start(__VA_ARGS__);                                              \
  if (!run) {                                                                 \
    GTEST_SKIP() << "target cannot produce this scenario";                    \
  }

TEST_P(BackendConformance, NormalCompletion) {
  START_OR_SKIP(run, Scenario::normal);
  expect_complete(*run);
  expect_quiet_after_end(*run);
}

TEST_P(BackendConformance, TwoChoices) {
  START_OR_SKIP(run, Scenario::two_choices);
  ASSERT_EQ(run->request->chat.n, 2);
  expect_complete(*run);
  expect_quiet_after_end(*run);
}

TEST_P(BackendConformance, SameRequestGivesSameEvents) {
  START_OR_SKIP(first, Scenario::normal, 77);
  START_OR_SKIP(second, Scenario::normal, 77);
  expect_complete(*first);
  expect_complete(*second);
  auto a = first->sink->events(), b = second->sink->events();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].choice, b[i].choice);
    EXPECT_EQ(a[i].delta.content, b[i].delta.content);
    EXPECT_EQ(a[i].finish_reason, b[i].finish_reason);
  }
}

TEST_P(BackendConformance, SeedReachesTheGenerator) {
  START_OR_SKIP(one, Scenario::normal, 1111);
  START_OR_SKIP(other, Scenario::normal, 2222);
  expect_complete(*one);
  expect_complete(*other);
  EXPECT_NE(one->sink->text(0), other->sink->text(0));
}

TEST_P(BackendConformance, FirstByteTimeoutGives504) {
  START_OR_SKIP(run, Scenario::first_byte_timeout);
  expect_error(*run, 504);
  expect_quiet_after_end(*run);
}

TEST_P(BackendConformance, CutStreamIsAnErrorNeverACompletion) {
  START_OR_SKIP(run, Scenario::cut_stream);
  expect_error(*run, 502);
  expect_quiet_after_end(*run);
}

TEST_P(BackendConformance, ServerErrorGives502) {
  START_OR_SKIP(run, Scenario::server_error);
  expect_error(*run, 502);
  EXPECT_EQ(run->sink->error().type, "upstream_error");
}

TEST_P(BackendConformance, RateLimitKeeps429AndMessage) {
  START_OR_SKIP(run, Scenario::rate_limited);
  expect_error(*run, 429);
  EXPECT_NE(run->sink->error().message.find("Rate limit"), std::string::npos)
      << run->sink->error().message;
}

TEST_P(BackendConformance, UnreachableGives502) {
  START_OR_SKIP(run, Scenario::unreachable);
  expect_error(*run, 502);
  expect_quiet_after_end(*run);
}

TEST_P(BackendConformance, DroppingTheHandleCancels) {
  START_OR_SKIP(run, Scenario::long_stream);
  ASSERT_TRUE(run->sink->wait_events(2));
  run->handle.reset();
  // A call already under way may still land; give it a moment, then nothing
  // more may arrive (not even on_complete / on_error).
  std::this_thread::sleep_for(50ms);
  int calls = run->sink->calls();
  std::this_thread::sleep_for(500ms);
  EXPECT_EQ(run->sink->calls(), calls);
  EXPECT_EQ(run->sink->completes(), 0);
  EXPECT_EQ(run->sink->errors(), 0);
  EXPECT_FALSE(run->sink->overlapped());
  if (auto saw = target_->generator_saw_cancel(3s)) {
    EXPECT_TRUE(*saw) << "the generator did not see the cancel";
  }
}

TEST_P(BackendConformance, DroppingTheHandleAfterTheEndIsHarmless) {
  START_OR_SKIP(run, Scenario::normal);
  ASSERT_TRUE(run->sink->wait_end());
  run->handle.reset();
  expect_complete(*run);
  expect_quiet_after_end(*run);
}

}  // namespace
}  // namespace reprox::testing
