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
