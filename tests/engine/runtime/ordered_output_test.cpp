// OrderedOutput: a request's choices run interleaved in the batch, but the
// sink sees choice 0's events, then choice 1's, ... and exactly one ending.
#include <gtest/gtest.h>


#include "engine/runtime/ordered_output.hpp"
#include <future>
#include <string>
#include <vector>

namespace reprox::engine {
namespace {

// Records what the engine sends; `done` is fulfilled once (true: complete).
struct Collect final : EngineSink {
  void on_event(GenEvent e) override { events.push_back(std::move(e)); }
  void on_complete(const Usage&, const std::string&) override { done.set_value(true); }
  void on_error(const EngineError& e) override {
    error = e;
    done.set_value(false);
  }
  std::vector<GenEvent> events;
  EngineError error{EngineErrc::kQueueFull, ""};
  std::promise<bool> done;
};

GenEvent event(uint32_t choice, const std::string& text, const std::string& finish = "") {
  GenEvent e;
  e.choice = choice;
  e.delta.content = text;
  e.finish_reason = finish;
  return e;
}

std::string order(const Collect& sink) {
  std::string s;
  for (const auto& e : sink.events) s += std::to_string(e.choice) + e.delta.content + (e.finish_reason.empty() ? "" : "!") + " ";
  return s;
}

TEST(OrderedOutput, LaterChoicesWaitForEarlierOnesToFinish) {
  auto sink = std::make_shared<Collect>();
  OrderedOutput out(sink, 3);
  out.event(2, event(2, "c"));
  out.event(0, event(0, "a"));
  out.event(1, event(1, "b"));
  EXPECT_EQ(order(*sink), "0a ");
  out.event(2, event(2, "C", "stop"));
  out.finish_choice(2);  // finished before the earlier ones: still held
  EXPECT_EQ(order(*sink), "0a ");
  out.event(0, event(0, "A", "length"));
  out.finish_choice(0);  // releases choice 1's held events; choice 1 now streams live
  EXPECT_EQ(order(*sink), "0a 0A! 1b ");
  out.event(1, event(1, "B", "stop"));
  EXPECT_EQ(order(*sink), "0a 0A! 1b 1B! ");
  out.finish_choice(1);  // choice 2 is already finished: all of it goes now
  EXPECT_EQ(order(*sink), "0a 0A! 1b 1B! 2c 2C! ");
  EXPECT_TRUE(out.all_finished());
  out.complete(Usage{3, 6, 0}, "fp");
  EXPECT_TRUE(sink->done.get_future().get());
}

TEST(OrderedOutput, TheFirstEndingWinsAndNothingFollowsIt) {
  auto sink = std::make_shared<Collect>();
  OrderedOutput out(sink, 2);
  out.event(1, event(1, "held"));
  out.fail(EngineError{EngineErrc::kForwardFailed, "boom"});
  out.event(0, event(0, "late"));
  out.finish_choice(0);
  out.complete(Usage{}, "fp");  // ignored: already failed
  EXPECT_TRUE(sink->events.empty());
  EXPECT_FALSE(sink->done.get_future().get());
  EXPECT_EQ(sink->error.code, EngineErrc::kForwardFailed);
  EXPECT_EQ(sink->error.message, "boom");
}

TEST(OrderedOutput, EventsOfAFinishedChoiceAreDropped) {
  auto sink = std::make_shared<Collect>();
  OrderedOutput out(sink, 1);
  out.event(0, event(0, "x", "stop"));
  out.finish_choice(0);
  out.event(0, event(0, "after"));
  out.event(5, event(5, "no such choice"));
  EXPECT_EQ(order(*sink), "0x! ");
}

}  // namespace
}  // namespace reprox::engine
