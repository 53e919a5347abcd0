#include <gtest/gtest.h>

#include "policies/cache_policy.hpp"
#include "proxy/api/cache_control.hpp"
#include "tests/support/test_names.hpp"

namespace reprox::policy {
namespace {

struct PolicyCase {
  const char* header;
  int64_t ttl;  // -1: absent
  bool readable, writable;
  const char* reason_part;
};

const PolicyCase kCases[] = {
    {"", -1, true, true, "cacheable"},
    {"no-cache", -1, false, true, "no-cache"},
    {"no-store", -1, false, false, "no-store"},
    {"no-store, no-cache", -1, false, false, "no-store"},
    {"only-if-cached", -1, true, false, "only-if-cached"},
    {"no-cache, only-if-cached", -1, false, false, "only-if-cached"},
    {"max-age=10", -1, true, true, "max-age=10"},
    {"", 0, true, false, "ttl 0"},
    {"", 60, true, true, "cacheable"},
};

class CachePolicyTable : public ::testing::TestWithParam<PolicyCase> {};

TEST_P(CachePolicyTable, Decides) {
  const PolicyCase& c = GetParam();
  api::CacheDirectives d = api::parse_cache_control(c.header);
  if (c.ttl >= 0) d.ttl_seconds = c.ttl;
  Cacheability got = cacheability(d);
  EXPECT_EQ(got.readable, c.readable) << c.header;
  EXPECT_EQ(got.writable, c.writable) << c.header;
  EXPECT_NE(got.reason.find(c.reason_part), std::string::npos) << got.reason;
}

INSTANTIATE_TEST_SUITE_P(Table, CachePolicyTable, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<PolicyCase>& info) {
                           return testing_support::case_name(info.index, info.param.header);
                         });

}  // namespace
}  // namespace reprox::policy

namespace reprox::policy {
namespace {

// Envoy-style request_cacheable / response_cacheable and their reasons.
struct RequestCase {
  const char* name;
  bool rule_cache, rule_tools, has_tools;
  const char* header;
  bool readable, writable;
  const char* reason_part;
};

const RequestCase kRequestCases[] = {
    {"ordinary", true, true, false, "", true, true, "cacheable"},
    {"rule_cache_false", false, true, false, "", false, false, "rule r: cache = false"},
    {"tools_stored_by_default", true, true, true, "", true, true, "cacheable"},
    {"rule_tools_false", true, false, true, "", false, false, "tools = false"},
    {"rule_tools_false_no_tools", true, false, false, "", true, true, "cacheable"},
    {"rule_wins_over_directives", false, true, false, "no-cache", false, false, "cache = false"},
    {"directives_under_rule", true, true, false, "no-store", false, false, "no-store"},
};

class RequestCacheableTable : public ::testing::TestWithParam<RequestCase> {};

TEST_P(RequestCacheableTable, Decides) {
  const RequestCase& c = GetParam();
  CacheRule rule;
  rule.name = "r";
  rule.cache = c.rule_cache;
  rule.tools = c.rule_tools;
  api::ChatRequest request;
  request.cache = api::parse_cache_control(c.header);
  if (c.has_tools) request.tools = json::Value(json::Array{});
  Cacheability got = request_cacheable(request, rule);
  EXPECT_EQ(got.readable, c.readable);
  EXPECT_EQ(got.writable, c.writable);
  EXPECT_EQ(got.bypass(), !c.readable && !c.writable);
  EXPECT_NE(got.reason.find(c.reason_part), std::string::npos) << got.reason;
}

INSTANTIATE_TEST_SUITE_P(Table, RequestCacheableTable, ::testing::ValuesIn(kRequestCases),
                         [](const ::testing::TestParamInfo<RequestCase>& info) { return std::string(info.param.name); });

Generation finished(std::vector<const char*> finish_reasons) {
  Generation g;
  g.n_choices = uint32_t(finish_reasons.size());
  for (uint32_t i = 0; i < g.n_choices; ++i) {
    GenEvent e;
    e.choice = i;
    e.delta.content = "text";
    e.finish_reason = finish_reasons[i];
    g.events.push_back(e);
  }
  return g;
}

struct ResponseCase {
  const char* name;
  std::vector<const char*> finish_reasons;  // "" = the choice never finished
  bool store_truncated;
  bool store;
  const char* reason_part;
};

const ResponseCase kResponseCases[] = {
    {"stop", {"stop"}, true, true, "complete"},
    {"length_stored_by_default", {"length"}, true, true, "complete"},
    {"length_not_stored_when_off", {"length"}, false, false, "store_truncated = false"},
    {"one_choice_of_two_truncated", {"stop", "length"}, false, false, "finish_reason length"},
    {"partial", {"stop", ""}, true, false, "incomplete"},
    {"tool_calls", {"tool_calls"}, false, true, "complete"},
};

class ResponseCacheableTable : public ::testing::TestWithParam<ResponseCase> {};

TEST_P(ResponseCacheableTable, Decides) {
  const ResponseCase& c = GetParam();
  ResponseCacheability got = response_cacheable(finished(c.finish_reasons), ResponsePolicy{c.store_truncated});
  EXPECT_EQ(got.store, c.store);
  EXPECT_NE(got.reason.find(c.reason_part), std::string::npos) << got.reason;
}

TEST(ResponseCacheable, AnAbortedAnswerWithNoEventsIsNeverStored) {
  Generation g;
  g.n_choices = 1;
  EXPECT_FALSE(response_cacheable(g, ResponsePolicy{}).store);
}

INSTANTIATE_TEST_SUITE_P(Table, ResponseCacheableTable, ::testing::ValuesIn(kResponseCases),
                         [](const ::testing::TestParamInfo<ResponseCase>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace reprox::policy
