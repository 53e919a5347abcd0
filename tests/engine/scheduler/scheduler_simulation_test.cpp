// A step loop like the engine's, with a real KvCacheManager and a fake model:
// schedule() -> preempt / acquire prefixes / allocate -> "compute" positions
// -> sample. The fake model's token for (request, choice, step) does not
// depend on the batch, which is what the row- and batch-invariant kernels
// guarantee. Checks, over random arrivals, sizes, cancellations and memory
// pressure: every sequence samples exactly max_tokens tokens, in order, with
// none dropped or repeated; no position is computed twice except after a
// preemption; reused blocks hold exactly the KV of the prefix they are
// matched for; the plan's block count always fits (allocate never fails); and
// every sequence finishes.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "engine/kv/kv_cache_manager.hpp"
#include "engine/scheduler/scheduler.hpp"

namespace reprox::engine::sched {
namespace {

using kv::BlockId;
using kv::KvCacheManager;

int32_t token_for(uint64_t root, int choice, int64_t step) {
  uint64_t x = root * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(choice) * 1000003ull + static_cast<uint64_t>(step);
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 29;
  return static_cast<int32_t>(x % 7);  // a small alphabet so conversations collide
}

struct SimSequence {
  RequestId id = 0;
  uint64_t arrival = 0;
  int tenant = 0;
  uint64_t root = 0;  // the request this choice belongs to
  int choice = 0;
  std::vector<int32_t> tokens;  // prompt + sampled
  int64_t prompt_len = 0;
  int64_t max_tokens = 0;
  int32_t extra_choices = 0;
  int64_t computed_len = 0;
  std::vector<BlockId> table;
  bool running = false;
  int preemptions = 0;
  std::map<int64_t, int> computed_times;  // position -> times computed
  int64_t generated() const { return static_cast<int64_t>(tokens.size()) - prompt_len; }
};

struct SimConfig {
  uint32_t seed = 1;
  int32_t block_size = 4;
  int32_t pool_blocks = 64;
  int32_t cache_budget_blocks = 32;
  SchedulerConfig sched;
  int requests = 60;
};

class Simulation {
 public:
  explicit Simulation(const SimConfig& c) : c_(c), kv_(kv_config(c)), rng_(c.seed), content_(static_cast<size_t>(c.pool_blocks)) {}

  void run() {
    for (int step = 0; step < 20000; ++step) {
      if (arrived_ < c_.requests && pick(3) == 0) arrive();
      if (pick(100) == 0) cancel_one();
      if (arrived_ == c_.requests && live_.empty()) break;
      one_step();
      if (::testing::Test::HasFailure()) return;
    }
    ASSERT_TRUE(live_.empty()) << "sequences left unfinished";
    ASSERT_EQ(kv_.allocatable_blocks(), c_.pool_blocks);
    ASSERT_GT(finished_, 0);
  }

  int finished_ = 0, preemptions_ = 0, reused_tokens_ = 0, rejected_ = 0, cancelled_ = 0, forks_ = 0;

 private:
  static kv::KvConfig kv_config(const SimConfig& c) {
    kv::KvConfig k;
    k.block_size = c.block_size;
    k.bytes_per_block = 1;
    k.pool_blocks = c.pool_blocks;
    k.cache_budget_bytes = c.cache_budget_blocks;
    k.max_conversations_per_tenant = 3;
    return k;
  }
  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  static std::string salt(int tenant) { return "t" + std::to_string(tenant); }

  void arrive() {
    ++arrived_;
    SimSequence s;
    s.id = next_id_++;
    s.arrival = next_arrival_++;
    s.root = s.id;
    s.tenant = pick(2);
    // Often a later turn of an earlier conversation of the same tenant.
    auto& past = history_[s.tenant];
    if (!past.empty() && pick(2) == 0) s.tokens = past[static_cast<size_t>(pick(static_cast<int>(past.size())))];
    const int extra = 1 + pick(24);
    for (int i = 0; i < extra; ++i) s.tokens.push_back(pick(7));
    if (s.tokens.size() > 80) s.tokens.erase(s.tokens.begin(), s.tokens.end() - 80);
    s.prompt_len = static_cast<int64_t>(s.tokens.size());
    s.max_tokens = 1 + pick(12);
    s.extra_choices = pick(6) == 0 ? 1 + pick(2) : 0;
    SequenceState peak;
    peak.prompt_len = s.prompt_len;
    peak.max_tokens = s.max_tokens;
    peak.extra_choices = s.extra_choices;
    if (peak_blocks(peak, c_.block_size) > c_.pool_blocks) {  // would be a 400 before the queue
      ++rejected_;
      return;
    }
    live_.push_back(std::move(s));
  }

  SimSequence* find(RequestId id) {
    for (auto& s : live_)
      if (s.id == id) return &s;
    return nullptr;
  }

  void release(SimSequence& s) {
    ASSERT_TRUE(kv_.unlock(s.table));
    s.table.clear();
  }

  void cancel_one() {
    if (live_.empty()) return;
    const size_t i = static_cast<size_t>(pick(static_cast<int>(live_.size())));
    const int32_t before = kv_.allocatable_blocks();
    const int32_t exclusive = kv_.exclusive_blocks(live_[i].table);
    release(live_[i]);
    const int32_t after = kv_.allocatable_blocks();
    ASSERT_GE(after, before);  // blocks come back at once
    if (c_.cache_budget_blocks == 0) {
      ASSERT_EQ(after, before + exclusive);
    }
    live_.erase(live_.begin() + static_cast<std::ptrdiff_t>(i));
    ++cancelled_;
  }

  SequenceState state_of(SimSequence& s) {
    SequenceState st;
    st.id = s.id;
    st.arrival = s.arrival;
    st.prompt_len = s.prompt_len;
    st.generated = s.generated();
    st.max_tokens = s.max_tokens;
    st.extra_choices = s.generated() == 0 ? s.extra_choices : 0;
    if (s.running) {
      st.computed_len = s.computed_len;
      st.blocks_held = static_cast<int32_t>(s.table.size());
      st.releasable_blocks = kv_.exclusive_blocks(s.table);
    } else {
      kv::PrefixMatch m = kv_.match_prefix(salt(s.tenant), s.tokens);
      st.cached_len = m.cached_tokens;
      st.cached_unreferenced_blocks = m.unreferenced_blocks;
    }
    return st;
  }

  std::vector<int32_t> content_for(const SimSequence& s, int64_t end) const {
    std::vector<int32_t> c{s.tenant};
    c.insert(c.end(), s.tokens.begin(), s.tokens.begin() + end);
    return c;
  }

  void one_step() {
    SchedulerState state;
    for (auto& s : live_) (s.running ? state.running : state.waiting).push_back(state_of(s));
    state.free_blocks = kv_.allocatable_blocks();
    const ScheduleOutput out = schedule(state, c_.sched);
    std::shuffle(state.running.begin(), state.running.end(), rng_);
    std::shuffle(state.waiting.begin(), state.waiting.end(), rng_);
    const ScheduleOutput again = schedule(state, c_.sched);
    ASSERT_EQ(again.scheduled.size(), out.scheduled.size());
    ASSERT_EQ(again.preempted, out.preempted);
    if (live_.empty()) return;
    ASSERT_TRUE(!out.scheduled.empty() || !out.preempted.empty()) << "no progress";
    ASSERT_LE(out.num_tokens, c_.sched.max_tokens_per_step);
    ASSERT_LE(static_cast<int32_t>(out.scheduled.size()), c_.sched.max_batch_size);

    for (RequestId id : out.preempted) {  // 1. preempt: keep what it computed, let go
      SimSequence* s = find(id);
      ASSERT_NE(s, nullptr);
      ASSERT_TRUE(s->running);
      kv_.insert(salt(s->tenant), std::vector<int32_t>(s->tokens.begin(), s->tokens.begin() + s->computed_len), s->table);
      release(*s);
      s->running = false;
      s->computed_len = 0;
      ++s->preemptions;
      ++preemptions_;
    }
    for (const auto& step : out.scheduled) {  // 2. lock every admitted prefix before any allocation
      if (!step.admitted) continue;
      SimSequence* s = find(step.id);
      ASSERT_FALSE(s->running);
      kv::PrefixMatch m = kv_.acquire_prefix(salt(s->tenant), s->tokens);
      ASSERT_EQ(m.cached_tokens, step.start);
      for (size_t b = 0; b < m.blocks.size(); ++b)
        ASSERT_EQ(content_[static_cast<size_t>(m.blocks[b])], content_for(*s, static_cast<int64_t>(b + 1) * c_.block_size))
            << "reused block holds other KV";
      s->table = m.blocks;
      s->computed_len = step.start;
      s->running = true;
      reused_tokens_ += static_cast<int>(step.start);
    }
    std::vector<SimSequence> born;
    for (const auto& step : out.scheduled) {  // 3. allocate, compute, sample
      SimSequence* s = find(step.id);
      ASSERT_EQ(step.start, s->computed_len);
      const int32_t own = blocks_for_tokens(step.start + step.num_tokens, c_.block_size) - static_cast<int32_t>(s->table.size());
      const bool partial = s->prompt_len % c_.block_size != 0;
      ASSERT_EQ(step.new_blocks, std::max(own, 0) + (partial ? step.forks : 0));
      auto fresh = kv_.allocate(step.new_blocks);
      ASSERT_TRUE(fresh.has_value()) << "the plan did not fit the pool";
      s->table.insert(s->table.end(), fresh->begin(), fresh->begin() + std::max(own, 0));
      for (int64_t pos = step.start; pos < step.start + step.num_tokens; ++pos) {
        ASSERT_LE(++s->computed_times[pos], 1 + s->preemptions) << "position computed twice without a preemption";
        content_[static_cast<size_t>(s->table[static_cast<size_t>(pos / c_.block_size)])] = content_for(*s, pos + 1);
      }
      s->computed_len += step.num_tokens;
      ASSERT_EQ(step.samples, s->computed_len == static_cast<int64_t>(s->tokens.size()));
      if (!step.samples) continue;
      const int64_t k = s->generated();
      ASSERT_LT(k, s->max_tokens);
      s->tokens.push_back(token_for(s->root, s->choice, k));
      ASSERT_EQ(step.forks, k == 0 ? s->extra_choices : 0);
      for (int c = 1; c <= step.forks; ++c) {  // siblings share the full prompt blocks, copy the partial one
        SimSequence sib;
        sib.id = next_id_++;
        sib.arrival = s->arrival;
        sib.tenant = s->tenant;
        sib.root = s->root;
        sib.choice = c;
        sib.tokens.assign(s->tokens.begin(), s->tokens.begin() + s->prompt_len);
        sib.tokens.push_back(token_for(s->root, c, 0));
        sib.prompt_len = s->prompt_len;
        sib.max_tokens = s->max_tokens;
        sib.computed_len = s->prompt_len;
        sib.running = true;
        const size_t full = static_cast<size_t>(s->prompt_len / c_.block_size);
        sib.table.assign(s->table.begin(), s->table.begin() + static_cast<std::ptrdiff_t>(full));
        ASSERT_TRUE(kv_.lock(sib.table));
        if (partial) {
          BlockId copy = (*fresh)[static_cast<size_t>(std::max(own, 0) + c - 1)];
          content_[static_cast<size_t>(copy)] = content_[static_cast<size_t>(s->table[full])];
          sib.table.push_back(copy);
        }
        for (int64_t pos = 0; pos < sib.prompt_len; ++pos) sib.computed_times[pos] = 1;
        born.push_back(std::move(sib));
        ++forks_;
      }
    }
    for (auto& b : born) live_.push_back(std::move(b));
    for (size_t i = 0; i < live_.size();) {  // 4. finished: keep prompt + completion, let go
      SimSequence& s = live_[i];
      if (s.generated() < s.max_tokens) {
        ++i;
        continue;
      }
      for (int64_t k = 0; k < s.max_tokens; ++k)
        ASSERT_EQ(s.tokens[static_cast<size_t>(s.prompt_len + k)], token_for(s.root, s.choice, k));
      kv_.insert(salt(s.tenant), std::vector<int32_t>(s.tokens.begin(), s.tokens.begin() + s.computed_len), s.table);
      release(s);
      history_[s.tenant].push_back(s.tokens);
      live_.erase(live_.begin() + static_cast<std::ptrdiff_t>(i));
      ++finished_;
    }
  }

  SimConfig c_;
  KvCacheManager kv_;
  std::mt19937 rng_;
  std::vector<std::vector<int32_t>> content_;
  std::vector<SimSequence> live_;
  std::map<int, std::vector<std::vector<int32_t>>> history_;
  int arrived_ = 0;
  RequestId next_id_ = 1;
  uint64_t next_arrival_ = 1;
};

SimConfig sim_config(uint32_t seed, int32_t bs, int32_t pool, int32_t cache, int64_t budget, int32_t batch, int64_t chunk) {
  SimConfig c;
  c.seed = seed;
  c.block_size = bs;
  c.pool_blocks = pool;
  c.cache_budget_blocks = cache;
  c.sched.block_size = bs;
  c.sched.max_tokens_per_step = budget;
  c.sched.max_batch_size = batch;
  c.sched.chunk_size = chunk;
  return c;
}

TEST(SchedulerSimulation, EverySequenceFinishesWithExactlyItsTokens) {
  int preemptions = 0, reused = 0, forks = 0, finished = 0;
  for (uint32_t seed = 1; seed <= 12; ++seed) {
    const SimConfig configs[] = {
        sim_config(seed, 4, 200, 100, 64, 8, 16),  // roomy
        sim_config(seed, 4, 40, 20, 32, 16, 8),    // tight pool: preemptions
        sim_config(seed, 1, 120, 0, 16, 4, 5),     // reuse off, one token per block
        sim_config(seed, 16, 14, 6, 1000, 16, 64), // big blocks, few of them
        sim_config(seed, 3, 60, 60, 7, 2, 3),      // tiny token budget and batch
    };
    for (const SimConfig& c : configs) {
      Simulation sim(c);
      sim.run();
      ASSERT_FALSE(::testing::Test::HasFailure())
          << "seed " << seed << " bs " << c.block_size << " pool " << c.pool_blocks;
      preemptions += sim.preemptions_;
      reused += sim.reused_tokens_;
      forks += sim.forks_;
      finished += sim.finished_;
    }
  }
  // The scenarios really exercised what they are for.
  EXPECT_GT(preemptions, 0);
  EXPECT_GT(reused, 0);
  EXPECT_GT(forks, 0);
  EXPECT_GT(finished, 500);
}

}  // namespace
}  // namespace reprox::engine::sched
