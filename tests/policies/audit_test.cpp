// The audit rules: what counts as the same answer, and which hits are picked.
#include "policies/audit.hpp"

#include <gtest/gtest.h>

namespace reprox::policy {
namespace {

GenEvent event(uint32_t choice, std::string text, std::string finish = "", std::string logprobs = "") {
  GenEvent e;
  e.choice = choice;
  e.delta.content = std::move(text);
  e.delta.logprobs = std::move(logprobs);
  e.finish_reason = std::move(finish);
  return e;
}

Generation two_choices() {
  Generation g;
  g.system_fingerprint = "fp_0123456789abcdef";
  g.n_choices = 2;
  g.usage = {7, 4, 0};
  g.events = {event(0, "Hello", "", "{\"t\":1}"), event(1, "Bye"), event(0, " world", "stop", "{\"t\":2}"),
              event(1, "!", "length")};
  return g;
}

TEST(Audit, ChunkingAndCachedTokensAreNotPartOfTheAnswer) {
  const Generation a = two_choices();
  Generation b = a;
  b.usage.cached_tokens = 5;  // the re-run reused KV
  b.events = {event(1, "B"), event(0, "Hel"), event(0, "lo", "", "{\"t\":1}"), event(1, "ye!", "length"),
              event(0, " world", "stop", "{\"t\":2}")};
  std::string why;
  EXPECT_TRUE(same_answer(a, b, &why)) << why;
}

TEST(Audit, EveryPartOfTheAnswerCounts) {
  const Generation a = two_choices();
  std::string why;
  Generation b = a;
  b.events[2].delta.content = " World";
  EXPECT_FALSE(same_answer(a, b, &why));
  EXPECT_EQ(why, "choice 0: text");
  b = a;
  b.events[3].finish_reason = "stop";
  EXPECT_FALSE(same_answer(a, b, &why));
  EXPECT_EQ(why, "choice 1: finish_reason length vs stop");
  b = a;
  b.events[2].delta.logprobs = "{\"t\":3}";
  EXPECT_FALSE(same_answer(a, b, &why));
  EXPECT_EQ(why, "choice 0: logprobs");
  b = a;
  b.events[1].delta.extra = "\"tool_calls\":[]";
  EXPECT_FALSE(same_answer(a, b, &why));
  b = a;
  b.system_fingerprint = "fp_other";
  EXPECT_FALSE(same_answer(a, b, &why));
  b = a;
  b.usage.completion_tokens = 5;
  EXPECT_FALSE(same_answer(a, b, &why));
  b = a;
  b.n_choices = 3;
  EXPECT_FALSE(same_answer(a, b, &why));
}

Generation text_of(const std::string& text) {
  Generation g;
  GenEvent e;
  e.delta.content = text;
  e.finish_reason = "stop";
  g.events.push_back(e);
  return g;
}

// Token similarity of two answers (the shadow comparison of near matching).
TEST(AnswerSimilarity, JaccardOfTokens) {
  EXPECT_DOUBLE_EQ(answer_similarity(text_of("a b c"), text_of("a b c")), 1.0);
  EXPECT_DOUBLE_EQ(answer_similarity(text_of("a b c"), text_of("c  b\na")), 1.0);  // spacing and order
  EXPECT_DOUBLE_EQ(answer_similarity(text_of("a b c d"), text_of("a b x y")), 2.0 / 6.0);
  EXPECT_DOUBLE_EQ(answer_similarity(text_of("a b"), text_of("c d")), 0.0);
  EXPECT_DOUBLE_EQ(answer_similarity(text_of(""), text_of("")), 1.0);
  EXPECT_DOUBLE_EQ(answer_similarity(text_of(""), text_of("a")), 0.0);
}

}  // namespace
}  // namespace reprox::policy
