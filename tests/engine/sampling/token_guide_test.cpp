#include "engine/sampling/token_guide.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "common/json.hpp"
#include "engine/sampling/sampler.hpp"
#include "test_logits.hpp"

namespace reprox::engine {
namespace {

// A toy vocabulary: JSON punctuation, words, multi-byte pieces, tokens that
// close several brackets at once, junk; id 0 plays eos ("" = never spelled).
std::vector<std::string> toy_vocabulary() {
  std::vector<std::string> v = {"",      "{",    "}",     "[",     "]",     "\"",    ":",     ",",    " ",     "\n  ",  "a",
          "b",     "key",  "\":",   "\": ",  "\"}",   "}}",    "]}",    "}]}",  "1",     "23",    "-",
          ".",     "e",    "true",  "fals",  "e}",    "null",  "\\",    "n",    "u00e9", "\xC3", "\xA9",
          "\xE2\x82\xAC", "yes", "no", "maybe", "y", "es", " yes", "x{", "{\"", "\"a", "ok\"", "0", "00", "\t"};
  // Every other printable ASCII byte, so that no state is a dead end.
  for (char c = ' '; c <= '~'; ++c)
    if (std::find(v.begin(), v.end(), std::string(1, c)) == v.end()) v.emplace_back(1, c);
  return v;
}

std::shared_ptr<const GuideVocabulary> toy(std::vector<std::string> first = {}) {
  return std::make_shared<const GuideVocabulary>(toy_vocabulary(), std::move(first));
}

// The allowed ids, brute force: feed every token's bytes to a copy.
template <class Machine>
std::vector<bool> brute_force(const Machine& m, const std::vector<std::string>& vocab) {
  std::vector<bool> ok(vocab.size(), false);
  for (size_t id = 0; id < vocab.size(); ++id) {
    Machine copy = m;
    ok[id] = !vocab[id].empty() && copy.feed(vocab[id]);
  }
  return ok;
}

std::vector<bool> guide_allows(const TokenGuide::Cursor& cursor, size_t vocab) {
  std::vector<double> x(vocab, 0.0);
  cursor.mask(x.data(), static_cast<int32_t>(vocab));
  std::vector<bool> ok(vocab);
  for (size_t id = 0; id < vocab; ++id) ok[id] = std::isfinite(x[id]);
  return ok;
}

TEST(TokenTrie, FindsExactlyTheTokensAMachineAccepts) {
  const auto vocab = toy_vocabulary();
  const TokenTrie trie(vocab);
  std::mt19937 rng(7);
  for (int walk = 0; walk < 200; ++walk) {
    JsonMachine m;
    for (int step = 0; step < 30 && !m.complete(); ++step) {
      const std::vector<bool> expected = brute_force(m, vocab);
      std::vector<bool> got(vocab.size(), false);
      trie.walk(m, [&](int32_t id) { got[static_cast<size_t>(id)] = true; });
      ASSERT_EQ(got, expected);
      std::vector<int32_t> options;
      for (size_t id = 0; id < vocab.size(); ++id)
        if (expected[id]) options.push_back(static_cast<int32_t>(id));
      if (options.empty()) break;
      ASSERT_TRUE(m.feed(vocab[static_cast<size_t>(options[rng() % options.size()])]));
    }
  }
}

TEST(TokenGuide, EndIdsOnlyWhenTheTextIsWhole) {
  const auto vocab = toy_vocabulary();
  const TokenGuide guide(GuideSpec{GuideSpec::Kind::kJsonObject, {}, nullptr}, toy(), {0});
  auto cursor = guide.start();
  auto ok = guide_allows(cursor, vocab.size());
  EXPECT_FALSE(ok[0]) << "eos before any text";
  EXPECT_TRUE(ok[1]);                      // {
  EXPECT_FALSE(ok[2]);                     // }
  EXPECT_TRUE(ok[8]);                      // leading space
  EXPECT_FALSE(ok[40]);                    // x{
  for (const int32_t id : {1, 5, 10, 13, 8, 24, 2}) cursor.advance(id);  // {"a": true}
  ok = guide_allows(cursor, vocab.size());
  EXPECT_TRUE(ok[0]) << "the object is whole";
  for (size_t id = 1; id < vocab.size(); ++id) EXPECT_FALSE(ok[id]) << "nothing may follow: " << vocab[id];
}

TEST(TokenGuide, ChoicesAndTheFirstTokensBytes) {
  const auto vocab = toy_vocabulary();
  // As a first token " yes" spells "yes" (decoders drop a leading space).
  std::vector<std::string> first = vocab;
  first[39] = "yes";
  const TokenGuide guide(GuideSpec{GuideSpec::Kind::kChoice, {"yes", "no"}, nullptr}, toy(first), {0});
  auto cursor = guide.start();
  auto ok = guide_allows(cursor, vocab.size());
  std::vector<std::string> allowed;
  for (size_t id = 0; id < vocab.size(); ++id)
    if (ok[id]) allowed.push_back(vocab[id]);
  EXPECT_EQ(allowed, (std::vector<std::string>{"n", "yes", "no", "y", " yes"}));
  cursor.advance(37);  // "y"
  ok = guide_allows(cursor, vocab.size());
  EXPECT_TRUE(ok[38]);   // "es"
  EXPECT_FALSE(ok[39]);  // " yes" after a token is " yes"
  EXPECT_FALSE(ok[0]);
  cursor.advance(38);
  ok = guide_allows(cursor, vocab.size());
  EXPECT_TRUE(ok[0]);
  EXPECT_EQ(std::count(ok.begin(), ok.end(), true), 1);
}

TEST(TokenGuide, ATokenOffTheLanguageLeavesOnlyTheEnd) {
  const auto vocab = toy_vocabulary();
  const TokenGuide guide(GuideSpec{GuideSpec::Kind::kChoice, {"yes"}, nullptr}, toy(), {0, 36});
  auto cursor = guide.start();
  cursor.advance(35);  // "no": replayed, not allowed
  const auto ok = guide_allows(cursor, vocab.size());
  EXPECT_TRUE(ok[0]);
  EXPECT_TRUE(ok[36]) << "every end id";
  EXPECT_EQ(std::count(ok.begin(), ok.end(), true), 2);
}

// Masks are cached by state keys that drop counts too far from their bounds
// for one token to matter: along random walks under a bounded schema, every
// mask (cached or not) is exactly what brute force finds for the text so far.
TEST(TokenGuide, CachedMasksUnderBoundsAreExact) {
  const auto vocab = toy_vocabulary();
  std::string error;
  const auto schema = JsonSchema::compile_text(
      R"({"type":"object","properties":{"s":{"type":"string","minLength":2,"maxLength":12},)"
      R"("l":{"type":"array","items":{"type":"integer","maximum":50},"minItems":1,"maxItems":6}},)"
      R"("required":["s","l"],"additionalProperties":false})",
      &error);
  ASSERT_TRUE(schema) << error;
  GuideSpec spec;
  spec.kind = GuideSpec::Kind::kJsonSchema;
  spec.schema = schema;
  const TokenGuide guide(spec, toy(), std::vector<int32_t>{0});
  std::mt19937 rng(11);
  int checked = 0;
  for (int walk = 0; walk < 150; ++walk) {
    TokenGuide::Cursor cursor = guide.start();
    JsonMachine machine(schema.get());
    std::string text;
    for (int step = 0; step < 40 && !machine.complete(); ++step) {
      const std::vector<bool> allowed = guide_allows(cursor, vocab.size());
      const std::vector<bool> expected = brute_force(machine, vocab);
      std::vector<int32_t> choices;
      for (size_t id = 1; id < vocab.size(); ++id) {
        EXPECT_EQ(allowed[id], expected[id]) << "after " << text << ": token " << vocab[id];
        if (expected[id]) choices.push_back(static_cast<int32_t>(id));
      }
      ++checked;
      ASSERT_FALSE(choices.empty()) << "a dead end after " << text;
      const int32_t token = choices[rng() % choices.size()];
      cursor.advance(token);
      ASSERT_TRUE(machine.feed(vocab[static_cast<size_t>(token)]));
      text += vocab[static_cast<size_t>(token)];
    }
  }
  EXPECT_GT(checked, 3000);
}

// Sampling under the guide at random temperatures: every finished answer is
// one JSON object, and the same seed draws the same tokens.
TEST(TokenGuide, SampledAnswersAreJsonObjects) {
  const auto vocab = toy_vocabulary();
  const auto guide = std::make_shared<const TokenGuide>(GuideSpec{GuideSpec::Kind::kJsonObject, {}, nullptr}, toy(),
                                                        std::vector<int32_t>{0});
  int finished = 0;
  for (uint32_t seed = 1; seed <= 200; ++seed) {
    SamplingParams params;
    params.seed = seed;
    params.temperature = 0.5 + (seed % 4) * 0.5;
    params.guide = guide;
    auto run = [&] {
      Sampler sampler(params, static_cast<int32_t>(vocab.size()), 0);
      std::string text;
      for (uint32_t step = 0; step < 60; ++step) {
        auto logits = testing::random_logits(static_cast<int32_t>(vocab.size()), seed * 1000 + step);
        logits[2] += 2.0f;   // lean towards closing
        logits[0] += 4.0f;   // and ending
        SampleResult r;
        EXPECT_EQ(sampler.sample(logits.data(), &r), SampleStatus::kOk);
        if (r.token == 0) return std::make_pair(true, text);
        text += vocab[static_cast<size_t>(r.token)];
      }
      return std::make_pair(false, text);
    };
    const auto [ended, text] = run();
    EXPECT_EQ(run().second, text) << "seed " << seed;
    JsonMachine prefix;
    EXPECT_TRUE(prefix.feed(text)) << text;
    if (!ended) continue;
    ++finished;
    // simdjson refuses numbers past a double's range, which JSON allows.
    if (std::regex_search(text, std::regex("[eE][+-]?[0-9]{3,}"))) continue;
    json::Value v;
    EXPECT_FALSE(json::parse(text, v)) << text;
    EXPECT_TRUE(v.is_object()) << text;
  }
  EXPECT_GT(finished, 20);
}

}  // namespace
}  // namespace reprox::engine
