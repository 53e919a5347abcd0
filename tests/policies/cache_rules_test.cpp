// Rule matching, TTL arithmetic and hot-key steps, as tables.
#include <gtest/gtest.h>

#include "policies/cache_rules.hpp"
#include "tests/support/test_names.hpp"

namespace reprox::policy {
namespace {

CacheRule rule(const char* name, const char* model, const char* ns, const char* tenant, const char* route) {
  CacheRule r;
  r.name = name;
  r.model = model;
  r.ns = ns;
  r.tenant = tenant;
  r.route = route;
  return r;
}

const std::vector<CacheRule> kRules = {
    rule("faq", "*", "faq", "*", "*"),
    rule("qwen-team-a", "qwen*", "*", "ab12*", "*"),
    rule("llama", "llama-[23]*", "*", "*", "/v1/chat/completions"),
    rule("other-route", "*", "*", "*", "/v1/other"),
};

struct MatchCase {
  const char* model;
  const char* ns;
  const char* tenant;
  const char* route;
  const char* expected;  // rule name
};

const MatchCase kMatchCases[] = {
    {"qwen3", "faq", "ab12ff", "/v1/chat/completions", "faq"},  // first match wins
    {"qwen3", "", "ab12ff", "/v1/chat/completions", "qwen-team-a"},
    {"qwen3", "", "cd34ff", "/v1/chat/completions", "default"},
    {"llama-3-8b", "", "", "/v1/chat/completions", "llama"},
    {"llama-4", "", "", "/v1/chat/completions", "default"},     // bracket class
    {"llama-2", "", "", "/v1/embeddings", "default"},           // route glob
    {"x", "", "", "/v1/other", "other-route"},
    {"x", "faq2", "", "/v1/chat/completions", "default"},       // globs match whole strings
};

class RuleMatchTable : public ::testing::TestWithParam<MatchCase> {};

TEST_P(RuleMatchTable, FirstMatchWins) {
  const MatchCase& c = GetParam();
  CacheRule fallback;
  const CacheRule& got = match_rule(kRules, fallback, RuleSubject{c.model, c.ns, c.tenant, c.route});
  EXPECT_EQ(got.name, c.expected);
}

INSTANTIATE_TEST_SUITE_P(Table, RuleMatchTable, ::testing::ValuesIn(kMatchCases),
                         [](const ::testing::TestParamInfo<MatchCase>& info) {
                           return testing_support::case_name(info.index, std::string(info.param.model) + "_" +
                                                                             info.param.ns + "_" + info.param.expected);
                         });

TEST(RuleMatch, NoRulesMeansTheDefault) {
  CacheRule fallback;
  EXPECT_EQ(&match_rule({}, fallback, RuleSubject{"m", "", "", "/v1/chat/completions"}), &fallback);
}

struct TtlCase {
  const char* name;
  int64_t rule_ttl, max_ttl;
  int64_t body_ttl;  // -1: absent
  int64_t max_age;   // -1: absent
  int64_t expected;
  const char* why_part;
};

const TtlCase kTtlCases[] = {
    {"rule_ttl", 3600, 604800, -1, -1, 3600, "rule r: ttl 3600s"},
    {"body_ttl_shortens", 3600, 604800, 60, -1, 60, "cache.ttl 60s"},
    {"body_ttl_lengthens_within_max", 3600, 86400, 7200, -1, 7200, "cache.ttl 7200s"},
    {"body_ttl_capped_at_max", 3600, 86400, 999999, -1, 86400, "capped at max_ttl 86400s"},
    {"max_age_shortens", 3600, 604800, -1, 30, 30, "max-age=30 shortens"},
    {"max_age_never_lengthens", 3600, 604800, -1, 99999, 3600, "-> 3600s"},
    {"max_age_zero_leaves_ttl", 3600, 604800, -1, 0, 3600, "-> 3600s"},
    {"both_take_the_shorter", 3600, 604800, 600, 120, 120, "max-age=120"},
    {"body_ttl_zero_stores_nothing", 3600, 604800, 0, -1, 0, "-> 0s"},
    {"rule_over_its_max", 90000, 86400, -1, -1, 86400, "capped at max_ttl"},
};

class TtlTable : public ::testing::TestWithParam<TtlCase> {};

TEST_P(TtlTable, Decides) {
  const TtlCase& c = GetParam();
  CacheRule r;
  r.name = "r";
  r.ttl_s = c.rule_ttl;
  r.max_ttl_s = c.max_ttl;
  api::CacheDirectives d;
  if (c.body_ttl >= 0) d.ttl_seconds = c.body_ttl;
  if (c.max_age >= 0) d.max_age_seconds = c.max_age;
  TtlDecision got = effective_ttl(r, d);
  EXPECT_EQ(got.ttl_s, c.expected);
  EXPECT_NE(got.why.find(c.why_part), std::string::npos) << got.why;
}

INSTANTIATE_TEST_SUITE_P(Table, TtlTable, ::testing::ValuesIn(kTtlCases),
                         [](const ::testing::TestParamInfo<TtlCase>& info) { return std::string(info.param.name); });

struct StepCase {
  int64_t base;
  uint32_t steps;
  int64_t max;
  int64_t expected;
};

const StepCase kStepCases[] = {
    {3600, 0, 604800, 3600},   {3600, 1, 604800, 7200},    {3600, 2, 604800, 14400},
    {3600, 7, 604800, 460800}, {3600, 8, 604800, 604800},  // capped: 921600 > 7 d
    {3600, 1000, 604800, 604800},                           // no overflow
    {60, 3, 100, 100},         {3600, 3, 3600, 3600},       // max_ttl = ttl: never grows
};

class HotStepTable : public ::testing::TestWithParam<StepCase> {};

TEST_P(HotStepTable, DoublesUpToMaxTtl) {
  const StepCase& c = GetParam();
  EXPECT_EQ(hot_ttl_seconds(c.base, c.steps, c.max), c.expected);
}

INSTANTIATE_TEST_SUITE_P(Table, HotStepTable, ::testing::ValuesIn(kStepCases),
                         [](const ::testing::TestParamInfo<StepCase>& info) {
                           return testing_support::case_name(info.index, "base" + std::to_string(info.param.base) +
                                                                             "_steps" + std::to_string(info.param.steps));
                         });

TEST(HotCounter, TheNthHitInAWindowMakesItHotOnce) {
  HotKeyPolicy p{3, 60};
  HotCounter c;
  EXPECT_FALSE(record_hit(c, 1000, p));
  EXPECT_FALSE(record_hit(c, 2000, p));
  EXPECT_TRUE(record_hit(c, 3000, p));
  EXPECT_EQ(c.steps, 1u);
  EXPECT_FALSE(record_hit(c, 4000, p));  // the same window: no second step
  EXPECT_EQ(c.steps, 1u);
}

TEST(HotCounter, HitsSpreadOverWindowsNeverMakeItHot) {
  HotKeyPolicy p{3, 60};
  HotCounter c;
  for (int i = 0; i < 10; ++i) EXPECT_FALSE(record_hit(c, int64_t(i) * 31000, p)) << i;  // two per window
  EXPECT_EQ(c.steps, 0u);
}

TEST(HotCounter, ANewWindowStepsAgain) {
  HotKeyPolicy p{2, 60};
  HotCounter c;
  record_hit(c, 0, p);
  EXPECT_TRUE(record_hit(c, 10, p));
  record_hit(c, 61000, p);
  EXPECT_TRUE(record_hit(c, 61010, p));
  EXPECT_EQ(c.steps, 2u);
}

TEST(HotCounter, OffWhenHitsIsZero) {
  HotCounter c;
  for (int i = 0; i < 100; ++i) EXPECT_FALSE(record_hit(c, i, HotKeyPolicy{0, 60}));
}

}  // namespace
}  // namespace reprox::policy
