#include <gtest/gtest.h>

#include "proxy/api/cache_control.hpp"
#include "tests/support/test_names.hpp"

namespace reprox::api {
namespace {

struct HeaderCase {
  const char* header;
  bool no_cache, no_store, only_if_cached;
  int64_t max_age;  // -1: absent
};

const HeaderCase kCases[] = {
    {"", false, false, false, -1},
    {"no-cache", true, false, false, -1},
    {"no-store", false, true, false, -1},
    {"only-if-cached", false, false, true, -1},
    {"max-age=60", false, false, false, 60},
    {"max-age=0", false, false, false, 0},
    {"NO-CACHE", true, false, false, -1},
    {"No-Store, Max-Age=5", false, true, false, 5},
    {"  no-cache ,  no-store  ", true, true, false, -1},
    {"no-cache,no-store,only-if-cached,max-age=9", true, true, true, 9},
    {"max-age=\"30\"", false, false, false, 30},
    {"max-age = 12", false, false, false, 12},
    {"max-age=abc", false, false, false, -1},
    {"max-age=-5", false, false, false, -1},
    {"max-age=", false, false, false, -1},
    {"max-age", false, false, false, -1},
    {"max-age=99999999999999999999999", false, false, false, INT64_MAX},
    {"max-age=100, max-age=10", false, false, false, 10},
    {",,,", false, false, false, -1},
    {"private, must-revalidate, foo=\"a,no-store\"", false, false, false, -1},
    {"no-cache=\"set-cookie\"", true, false, false, -1},
    {"garbage;;; no-cache", false, false, false, -1},
    {"\t only-if-cached\t", false, false, true, -1},
    {"no-cachex, xno-store", false, false, false, -1},
};

class CacheControlTable : public ::testing::TestWithParam<HeaderCase> {};

TEST_P(CacheControlTable, Parses) {
  const HeaderCase& c = GetParam();
  CacheDirectives d = parse_cache_control(c.header);
  EXPECT_EQ(d.no_cache, c.no_cache) << c.header;
  EXPECT_EQ(d.no_store, c.no_store) << c.header;
  EXPECT_EQ(d.only_if_cached, c.only_if_cached) << c.header;
  if (c.max_age < 0)
    EXPECT_FALSE(d.max_age_seconds) << c.header;
  else
    EXPECT_EQ(d.max_age_seconds.value_or(-1), c.max_age) << c.header;
  EXPECT_FALSE(d.ttl_seconds);
  EXPECT_FALSE(d.ns);
}

INSTANTIATE_TEST_SUITE_P(Headers, CacheControlTable, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<HeaderCase>& info) {
                           return testing_support::case_name(info.index, info.param.header);
                         });

TEST(MergeCacheDirectives, OrsFlagsAndKeepsBodyTtl) {
  CacheDirectives body;
  body.no_cache = true;
  body.ttl_seconds = 30;
  CacheDirectives header = parse_cache_control("no-store, max-age=5, only-if-cached");
  CacheDirectives m = merge_cache_directives(body, header, std::nullopt);
  EXPECT_TRUE(m.no_cache);
  EXPECT_TRUE(m.no_store);
  EXPECT_TRUE(m.only_if_cached);
  EXPECT_EQ(*m.max_age_seconds, 5);
  EXPECT_EQ(*m.ttl_seconds, 30);
}

TEST(MergeCacheDirectives, NamespaceHeaderWinsOverBody) {
  CacheDirectives body;
  body.ns = "from-body";
  EXPECT_EQ(*merge_cache_directives(body, {}, std::string_view("from-header")).ns, "from-header");
  EXPECT_EQ(*merge_cache_directives(body, {}, std::nullopt).ns, "from-body");
  EXPECT_EQ(*merge_cache_directives(body, {}, std::string_view("")).ns, "from-body");  // empty header: unset
  EXPECT_EQ(*merge_cache_directives({}, {}, std::string_view("h")).ns, "h");
  EXPECT_FALSE(merge_cache_directives({}, {}, std::nullopt).ns);
}

}  // namespace
}  // namespace reprox::api
