// One conformance suite over the NearIndex interface, instantiated for the
// in-memory index and the Redis index (against a real redis-server that the
// suite starts). Then what only one of them promises: the memory index's
// byte budget, and the Redis index shared by every instance on one Redis.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <future>
#include <thread>

#include "proxy/cache/memory_near_index.hpp"
#include "proxy/cache/redis/redis_near_index.hpp"
#include "proxy/cache/redis/redis_store.hpp"
#include "tests/proxy/cache/redis/redis_server.hpp"
#include "tests/proxy/cache/redis/shared_redis.hpp"

namespace reprox {
namespace {

using namespace std::chrono_literals;
using testing::conformance_redis_options;
using testing::shared_redis;

struct Harness {
  virtual ~Harness() = default;
  virtual NearIndex& index() = 0;
};

struct MemoryHarness : Harness {
  MemoryNearIndex memory;
  NearIndex& index() override { return memory; }
};

struct RedisHarness : Harness {
  RedisHarness() { shared_redis().command({"FLUSHALL"}); }
  RedisStore store{conformance_redis_options()};
  RedisNearIndex redis{store};
  NearIndex& index() override { return redis; }
};

struct IndexKind {
  const char* name;
  std::function<std::unique_ptr<Harness>()> make;
};

NearBands bands_from(uint32_t base) {
  NearBands b{};
  for (size_t i = 0; i < b.size(); ++i) b[i] = base + uint32_t(i);
  return b;
}

// Waits for `done`; an index that never answers, or answers twice, fails.
std::vector<NearEntry> candidates_sync(NearIndex& index, const std::string& context, const NearBands& bands) {
  auto promise = std::make_shared<std::promise<std::vector<NearEntry>>>();
  auto calls = std::make_shared<std::atomic<int>>(0);
  auto future = promise->get_future();
  index.candidates(context, bands, [promise, calls](std::vector<NearEntry> found) {
    if (calls->fetch_add(1) == 0) promise->set_value(std::move(found));
  });
  if (future.wait_for(5s) != std::future_status::ready) {
    ADD_FAILURE() << "candidates() never called done";
    return {};
  }
  std::this_thread::sleep_for(5ms);
  EXPECT_EQ(calls->load(), 1) << "done runs exactly once";
  return future.get();
}

std::vector<std::string> keys_of(const std::vector<NearEntry>& entries) {
  std::vector<std::string> keys;
  for (const auto& e : entries) keys.push_back(e.key);
  std::sort(keys.begin(), keys.end());
  return keys;
}

class NearIndexConformance : public ::testing::TestWithParam<IndexKind> {
 protected:
  void SetUp() override { harness_ = GetParam().make(); }
  NearIndex& index() { return harness_->index(); }
  void add(const std::string& context, const NearBands& bands, const std::string& key, const std::string& text,
           std::chrono::seconds ttl = 60s) {
    index().add(context, bands, NearEntry{key, text, nullptr}, ttl);
  }
  std::unique_ptr<Harness> harness_;
};

TEST_P(NearIndexConformance, EmptyIndexHasNoCandidates) {
  EXPECT_TRUE(candidates_sync(index(), "ctx", bands_from(100)).empty());
}

TEST_P(NearIndexConformance, OneSharedBandMakesACandidate) {
  add("ctx", bands_from(100), "k1", "what is the capital of France?");
  NearBands query = bands_from(900);
  query[5] = 105;  // the one band in common
  auto found = candidates_sync(index(), "ctx", query);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].key, "k1");
  EXPECT_EQ(found[0].text, "what is the capital of France?");
}

TEST_P(NearIndexConformance, NoSharedBandNoCandidate) {
  add("ctx", bands_from(100), "k1", "text");
  EXPECT_TRUE(candidates_sync(index(), "ctx", bands_from(200)).empty());
}

// A context key stands for everything but the last user message (model,
// tenant, sampling): entries of one context are never candidates in another.
TEST_P(NearIndexConformance, ContextsAreSeparate) {
  add("ctx-a", bands_from(100), "k1", "text");
  EXPECT_TRUE(candidates_sync(index(), "ctx-b", bands_from(100)).empty());
  EXPECT_EQ(keys_of(candidates_sync(index(), "ctx-a", bands_from(100))), std::vector<std::string>{"k1"});
}

TEST_P(NearIndexConformance, EveryMatchingEntryOnce) {
  add("ctx", bands_from(100), "k1", "one");
  add("ctx", bands_from(100), "k2", "two");  // every band shared with k1
  NearBands other = bands_from(500);
  other[0] = 100;
  add("ctx", other, "k3", "three");
  add("ctx", bands_from(700), "k4", "four");  // no band with the query
  EXPECT_EQ(keys_of(candidates_sync(index(), "ctx", bands_from(100))), (std::vector<std::string>{"k1", "k2", "k3"}));
}

// The same key answered again (a refresh): one candidate, with its newer text.
TEST_P(NearIndexConformance, AddingAKeyAgainKeepsOneEntry) {
  add("ctx", bands_from(100), "k1", "first text");
  add("ctx", bands_from(100), "k1", "second text");
  auto found = candidates_sync(index(), "ctx", bands_from(100));
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].text, "second text");
}

TEST_P(NearIndexConformance, ExpiredEntriesAreNotCandidates) {
  add("ctx", bands_from(100), "short", "short-lived", 1s);
  add("ctx", bands_from(100), "long", "long-lived", 60s);
  EXPECT_EQ(keys_of(candidates_sync(index(), "ctx", bands_from(100))), (std::vector<std::string>{"long", "short"}));
  std::this_thread::sleep_for(1100ms);
  EXPECT_EQ(keys_of(candidates_sync(index(), "ctx", bands_from(100))), std::vector<std::string>{"long"});
}

// Scoring is bounded per miss: one lookup returns at most kMaxNearCandidates.
TEST_P(NearIndexConformance, CandidatesAreBounded) {
  const int n = int(kMaxNearCandidates) + 40;
  for (int i = 0; i < n; ++i) {
    add("ctx", bands_from(100), "key-" + std::to_string(i), "text " + std::to_string(i));
    // Redis queues commands per connection, bounded (a burst past it is
    // skipped): a lookup behind every hundred adds lets them drain.
    if (i % 100 == 99) candidates_sync(index(), "ctx", bands_from(100));
  }
  auto found = candidates_sync(index(), "ctx", bands_from(100));
  EXPECT_EQ(found.size(), kMaxNearCandidates);
  auto keys = keys_of(found);
  EXPECT_EQ(std::unique(keys.begin(), keys.end()), keys.end()) << "no key twice";
}

TEST_P(NearIndexConformance, EachEntryIsFoundByItsOwnBands) {
  for (uint32_t i = 0; i < 50; ++i) add("ctx", bands_from(1000 + 10 * i), "key-" + std::to_string(i), "t");
  for (uint32_t i = 0; i < 50; ++i) {
    auto keys = keys_of(candidates_sync(index(), "ctx", bands_from(1000 + 10 * i)));
    EXPECT_EQ(keys, std::vector<std::string>{"key-" + std::to_string(i)}) << i;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Indexes, NearIndexConformance,
    ::testing::Values(IndexKind{"memory", [] { return std::unique_ptr<Harness>(new MemoryHarness); }},
                      IndexKind{"redis", [] { return std::unique_ptr<Harness>(new RedisHarness); }}),
    [](const ::testing::TestParamInfo<IndexKind>& info) { return std::string(info.param.name); });

// In memory: past its byte budget the oldest additions go first, and an
// entry larger than the whole budget is not kept.
TEST(MemoryNearIndex, ByteBudgetDropsTheOldestFirst) {
  MemoryNearIndex index(64 * 1024);
  const std::string text(2000, 'x');
  const int added = 100;  // each over 2 KB: several times the budget
  for (int i = 0; i < added; ++i) {
    index.add("ctx", bands_from(100), NearEntry{"key-" + std::to_string(i), text, nullptr}, 60s);
    ASSERT_LE(index.bytes(), 64u * 1024);
  }
  auto keys = keys_of(candidates_sync(index, "ctx", bands_from(100)));
  EXPECT_LT(keys.size(), size_t(added)) << "the budget dropped some";
  EXPECT_FALSE(std::count(keys.begin(), keys.end(), "key-0")) << "the oldest went first";
  EXPECT_TRUE(std::count(keys.begin(), keys.end(), "key-" + std::to_string(added - 1))) << "the newest stays";

  index.add("ctx", bands_from(300), NearEntry{"huge", std::string(128 * 1024, 'y'), nullptr}, 60s);
  EXPECT_TRUE(candidates_sync(index, "ctx", bands_from(300)).empty());
  EXPECT_FALSE(candidates_sync(index, "ctx", bands_from(100)).empty()) << "a too-large entry evicts nothing";
}

// In Redis: the index lives beside the entries, so an entry one instance
// adds is a candidate for every other instance on that Redis.
TEST(RedisNearIndex, InstancesOnOneRedisShareTheIndex) {
  shared_redis().command({"FLUSHALL"});
  RedisStore store_a{conformance_redis_options()}, store_b{conformance_redis_options()};
  RedisNearIndex a{store_a}, b{store_b};
  a.add("ctx", bands_from(100), NearEntry{"k1", "shared text", nullptr}, 60s);
  std::vector<NearEntry> found;
  for (int i = 0; i < 200 && found.empty(); ++i) {
    found = candidates_sync(b, "ctx", bands_from(100));
    if (found.empty()) std::this_thread::sleep_for(10ms);  // a's add is asynchronous
  }
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].key, "k1");
  EXPECT_EQ(found[0].text, "shared text");
  const auto ttl = shared_redis().command({"PTTL", "reprox:v1:neartext:k1"}).integer;
  EXPECT_GT(ttl, 50'000);
  EXPECT_LE(ttl, 60'000);
}

}  // namespace
}  // namespace reprox
