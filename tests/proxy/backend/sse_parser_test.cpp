#include "proxy/backend/sse_parser.hpp"

#include <gtest/gtest.h>

namespace reprox::backend {
namespace {

// LF, CRLF and bare-CR line ends, a comment, a multi-line data field, an
// event name, an unknown field, "data" without a colon, a no-space value.
const std::string kStream =
    ": comment at the start\n"
    "data: {\"a\":1}\n"
    "\n"
    "data: first line\r\n"
    "data: second line\r\n"
    "\r\n"
    "event: custom\r"
    "data:no space\r"
    "id: 7\r"
    "\r"
    "retry: 100\n"
    "data\n"
    "\n"
    ": only a comment\n"
    "\n"
    "data: [DONE]\n"
    "\n";

std::vector<SseEvent> expected() {
  return {{"", "{\"a\":1}"},
          {"", "first line\nsecond line"},
          {"custom", "no space"},
          {"", ""},
          {"", "[DONE]"}};
}

void expect_events(const std::vector<SseEvent>& got, const std::string& where) {
  auto want = expected();
  ASSERT_EQ(got.size(), want.size()) << where;
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].event, want[i].event) << where << " event " << i;
    EXPECT_EQ(got[i].data, want[i].data) << where << " event " << i;
  }
}

TEST(SseParser, WholeBuffer) {
  SseParser parser;
  std::vector<SseEvent> out;
  ASSERT_TRUE(parser.feed(kStream, out));
  parser.finish(out);
  expect_events(out, "whole");
}

TEST(SseParser, EverySplitPoint) {
  for (size_t cut = 0; cut <= kStream.size(); ++cut) {
    SseParser parser;
    std::vector<SseEvent> out;
    ASSERT_TRUE(parser.feed(std::string_view(kStream).substr(0, cut), out));
    ASSERT_TRUE(parser.feed(std::string_view(kStream).substr(cut), out));
    parser.finish(out);
    expect_events(out, "cut at " + std::to_string(cut));
  }
}

TEST(SseParser, EveryPairOfSplitPoints) {
  std::string_view s(kStream);
  for (size_t a = 0; a <= s.size(); a += 3) {
    for (size_t b = a; b <= s.size(); ++b) {
      SseParser parser;
      std::vector<SseEvent> out;
      ASSERT_TRUE(parser.feed(s.substr(0, a), out));
      ASSERT_TRUE(parser.feed(s.substr(a, b - a), out));
      ASSERT_TRUE(parser.feed(s.substr(b), out));
      parser.finish(out);
      expect_events(out, "cuts at " + std::to_string(a) + "," + std::to_string(b));
    }
  }
}

TEST(SseParser, ByteByByte) {
  SseParser parser;
  std::vector<SseEvent> out;
  for (char c : kStream) ASSERT_TRUE(parser.feed(std::string_view(&c, 1), out));
  parser.finish(out);
  expect_events(out, "byte by byte");
}

TEST(SseParser, EventsAreDispatchedOnlyAtTheBlankLine) {
  SseParser parser;
  std::vector<SseEvent> out;
  ASSERT_TRUE(parser.feed("data: x\n", out));
  EXPECT_TRUE(out.empty());
  ASSERT_TRUE(parser.feed("\n", out));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].data, "x");
}

TEST(SseParser, CrThenLfInTheNextFeedIsOneLineEnd) {
  SseParser parser;
  std::vector<SseEvent> out;
  ASSERT_TRUE(parser.feed("data: x\r", out));
  ASSERT_TRUE(parser.feed("\n\r", out));
  ASSERT_TRUE(parser.feed("\ndata: y\n\n", out));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].data, "x");
  EXPECT_EQ(out[1].data, "y");
}

TEST(SseParser, FinishDispatchesAnUnterminatedEvent) {
  SseParser parser;
  std::vector<SseEvent> out;
  ASSERT_TRUE(parser.feed("data: [DONE]", out));
  EXPECT_TRUE(out.empty());
  parser.finish(out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].data, "[DONE]");
}

TEST(SseParser, LeadingBomIsSkippedEvenWhenSplit) {
  SseParser parser;
  std::vector<SseEvent> out;
  ASSERT_TRUE(parser.feed("\xEF\xBB", out));
  ASSERT_TRUE(parser.feed("\xBF" "data: x\n\n", out));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].data, "x");
}

TEST(SseParser, OversizedEventIsRefused) {
  SseParser parser(64);
  std::vector<SseEvent> out;
  EXPECT_TRUE(parser.feed("data: " + std::string(40, 'a') + "\n", out));
  EXPECT_FALSE(parser.feed("data: " + std::string(40, 'b') + "\n\n", out));
  EXPECT_TRUE(out.empty());
}

}  // namespace
}  // namespace reprox::backend
