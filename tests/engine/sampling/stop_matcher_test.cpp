#include "engine/sampling/stop_matcher.hpp"

#include <gtest/gtest.h>

#include <random>

namespace reprox::engine {
namespace {

struct StopCase {
  const char* name;
  std::vector<std::string> stops;
  std::vector<std::string> pieces;
  std::vector<std::string> outputs;  // feed() text per piece
  bool stopped;
  std::string flushed;   // flush() after the pieces (when not stopped)
  std::string matched;   // matched_stop() when stopped
};

const StopCase kCases[] = {
    {"split across two pieces", {"STOP"}, {"hello ST", "OP world"}, {"hello ", ""}, true, "", "STOP"},
    {"split across three pieces", {"<|end|>"}, {"hel", "lo <|e", "nd|> x"}, {"hel", "lo ", ""}, true, "", "<|end|>"},
    {"prefix that turns out not to match", {"abc"}, {"xab", "d", "y"}, {"x", "abd", "y"}, false, "", ""},
    {"overlapping stops abc and abd", {"abc", "abd"}, {"xab", "d", "y"}, {"x", ""}, true, "", "abd"},
    {"earliest end wins", {"abc", "b"}, {"abc"}, {"a"}, true, "", "b"},
    {"earliest end wins when fed per char", {"abc", "b"}, {"a", "b", "c"}, {"", "a"}, true, "", "b"},
    {"same end prefers the longer", {"bc", "abc"}, {"xabc"}, {"x"}, true, "", "abc"},
    {"stop at the very start", {"Hi"}, {"Hi there"}, {""}, true, "", "Hi"},
    {"stop is the whole first piece", {"\n\n"}, {"\n", "\n", "more"}, {"", ""}, true, "", "\n\n"},
    {"repeated prefix", {"aab"}, {"aa", "aab"}, {"", "aa"}, true, "", "aab"},
    {"no stop strings passes text through", {}, {"ab", "cd"}, {"ab", "cd"}, false, "", ""},
    {"empty stop string is ignored", {""}, {"ab"}, {"ab"}, false, "", ""},
    {"flush releases held prefix", {"END"}, {"the EN"}, {"the "}, false, "EN", ""},
    {"non-ASCII stop split mid-character", {"\xC3\xA9!"}, {"caf\xC3", "\xA9!", "more"}, {"caf", ""}, true, "", "\xC3\xA9!"},
    {"partial character held until complete", {"xyz"}, {"caf\xC3", "\xA9 ok"}, {"caf", "\xC3\xA9 ok"}, false, "", ""},
    {"CJK stop prefix held then released", {"日本"}, {"今日は日", "曜日"}, {"今日は", "日曜"}, false, "日", ""},
    {"CJK stop across pieces", {"日本"}, {"今日は日", "本です"}, {"今日は", ""}, true, "", "日本"},
    {"four-byte character split three ways", {"😀!"}, {"a\xF0\x9F", "\x98", "\x80", "!"}, {"a", "", "", ""}, true, "", "😀!"},
    {"emoji not followed by stop", {"😀!"}, {"a\xF0\x9F", "\x98\x80", "?"}, {"a", "", "\xF0\x9F\x98\x80?"}, false, "", ""},
    {"flush releases an incomplete character", {"z"}, {"ab\xE6\x97"}, {"ab"}, false, "\xE6\x97", ""},
    {"text after a stop is dropped", {"."}, {"one. two", "three"}, {"one"}, true, "", "."},
};

TEST(StopMatcher, Table) {
  for (const auto& c : kCases) {
    SCOPED_TRACE(c.name);
    StopMatcher matcher(c.stops);
    std::vector<std::string> outputs;
    bool stopped = false;
    for (const auto& piece : c.pieces) {
      auto output = matcher.feed(piece);
      EXPECT_FALSE(stopped && (output.stopped || !output.text.empty())) << "output after stop";
      if (!stopped) outputs.push_back(output.text);
      stopped = stopped || output.stopped;
    }
    EXPECT_EQ(outputs, c.outputs);
    EXPECT_EQ(stopped, c.stopped);
    EXPECT_EQ(matcher.stopped(), c.stopped);
    if (c.stopped) {
      EXPECT_EQ(matcher.matched_stop(), c.matched);
      EXPECT_EQ(matcher.flush(), "");
    } else {
      EXPECT_EQ(matcher.flush(), c.flushed);
    }
    EXPECT_EQ(matcher.held_bytes(), 0u);
  }
}

// Whatever way the text is cut, the sent text and the verdict are the same.
TEST(StopMatcher, ResultDoesNotDependOnHowTextIsCut) {
  std::mt19937 random(17);
  for (const auto& c : kCases) {
    SCOPED_TRACE(c.name);
    std::string whole;
    for (const auto& piece : c.pieces) whole += piece;
    StopMatcher reference(c.stops);
    const auto once = reference.feed(whole);
    const std::string expected = once.text + (once.stopped ? "" : reference.flush());
    for (int trial = 0; trial < 200; ++trial) {
      StopMatcher matcher(c.stops);
      std::string sent;
      bool stopped = false;
      size_t position = 0;
      while (position < whole.size() && !stopped) {
        const size_t length = 1 + random() % 4;
        const auto output = matcher.feed(std::string_view(whole).substr(position, length));
        sent += output.text;
        stopped = output.stopped;
        position += length;
        // Nothing sent is ever retracted: it stays a prefix of the final text.
        ASSERT_EQ(expected.compare(0, sent.size(), sent), 0) << "sent " << sent;
      }
      if (!stopped) sent += matcher.flush();
      EXPECT_EQ(sent, expected);
      EXPECT_EQ(stopped, once.stopped);
    }
  }
}

// keep_match (include_stop_str_in_output): the sent text ends with the
// winning match; what follows it is still dropped.
TEST(StopMatcher, KeepMatchSendsTheStopString) {
  StopMatcher matcher({"END", "."}, /*keep_match=*/true);
  EXPECT_EQ(matcher.feed("one E").text, "one ");
  const auto output = matcher.feed("ND. two");
  EXPECT_TRUE(output.stopped);
  EXPECT_EQ(output.text, "END");
  EXPECT_EQ(matcher.matched_stop(), "END");
}

// may_end false (min_tokens): no match may end in that piece; one that
// starts there and ends in a later piece counts, as in vLLM's check.
TEST(StopMatcher, NoMatchEndsInAPieceThatMayNotEnd) {
  StopMatcher early({"ab"});
  auto out = early.feed("xab", /*may_end=*/false);
  EXPECT_FALSE(out.stopped);
  EXPECT_EQ(out.text, "xab");
  out = early.feed("yab");
  EXPECT_TRUE(out.stopped);
  EXPECT_EQ(out.text, "y");

  StopMatcher across({"abc"});
  EXPECT_EQ(across.feed("xa", false).text, "x");
  EXPECT_EQ(across.feed("b", false).text, "");  // "ab" is held: it may still end in a later piece
  out = across.feed("c!");
  EXPECT_TRUE(out.stopped);
  EXPECT_EQ(out.text, "");

  // The earliest match that ends in an armed piece wins, not an earlier
  // one inside the unarmed text.
  StopMatcher both({"a", "bc"});
  out = both.feed("aa", false);
  EXPECT_FALSE(out.stopped);
  EXPECT_EQ(out.text, "aa");
  out = both.feed("bca");
  EXPECT_TRUE(out.stopped);
  EXPECT_EQ(both.matched_stop(), "bc");
}

}  // namespace
}  // namespace reprox::engine
