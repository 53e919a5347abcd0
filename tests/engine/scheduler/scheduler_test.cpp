#include "engine/scheduler/scheduler.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

namespace reprox::engine::sched {
namespace {

SchedulerConfig cfg(int64_t budget, int32_t batch, int64_t chunk, int32_t bs = 4) {
  SchedulerConfig c;
  c.block_size = bs;
  c.max_tokens_per_step = budget;
  c.max_batch_size = batch;
  c.chunk_size = chunk;
  return c;
}

SequenceState waiting(RequestId id, int64_t prompt, int64_t max_tokens, int64_t cached = 0) {
  SequenceState s;
  s.id = id;
  s.arrival = id;
  s.prompt_len = prompt;
  s.max_tokens = max_tokens;
  s.cached_len = cached;
  return s;
}

// A running sequence in decode: prompt done, `generated` sampled, the last one not fed yet.
SequenceState decoding(RequestId id, int64_t prompt, int64_t generated, int64_t max_tokens, int32_t bs = 4) {
  SequenceState s = waiting(id, prompt, max_tokens);
  s.generated = generated;
  s.computed_len = prompt + generated - 1;
  s.blocks_held = blocks_for_tokens(s.computed_len, bs);
  s.releasable_blocks = s.blocks_held;
  return s;
}

const ScheduledSequence* find(const ScheduleOutput& out, RequestId id) {
  for (const auto& s : out.scheduled)
    if (s.id == id) return &s;
  return nullptr;
}

TEST(Schedule, RejectsInvalidConfig) {
  EXPECT_NE(validate_scheduler_config(cfg(0, 1, 1)), "");
  EXPECT_NE(validate_scheduler_config(cfg(1, 0, 1)), "");
  EXPECT_NE(validate_scheduler_config(cfg(1, 1, 0)), "");
  EXPECT_EQ(validate_scheduler_config(cfg(1, 1, 1)), "");
  SchedulerState st;
  st.waiting = {waiting(1, 4, 1)};
  st.free_blocks = 10;
  EXPECT_TRUE(schedule(st, cfg(0, 1, 1)).scheduled.empty());
}

TEST(Schedule, AdmitsInArrivalOrderUnderTheTokenBudget) {
  SchedulerState st;
  st.waiting = {waiting(3, 10, 5), waiting(1, 10, 5), waiting(2, 10, 5)};  // any input order
  st.free_blocks = 100;
  ScheduleOutput out = schedule(st, cfg(/*budget=*/25, 8, /*chunk=*/100));
  ASSERT_EQ(out.scheduled.size(), 3u);
  EXPECT_EQ(out.scheduled[0].id, 1u);
  EXPECT_EQ(out.scheduled[0].num_tokens, 10);
  EXPECT_TRUE(out.scheduled[0].samples);
  EXPECT_EQ(out.scheduled[1].id, 2u);
  EXPECT_EQ(out.scheduled[1].num_tokens, 10);
  EXPECT_EQ(out.scheduled[2].id, 3u);
  EXPECT_EQ(out.scheduled[2].num_tokens, 5);  // the rest of the budget: a chunk
  EXPECT_FALSE(out.scheduled[2].samples);
  EXPECT_EQ(out.scheduled[2].new_blocks, 2);
  EXPECT_EQ(out.num_tokens, 25);
  EXPECT_EQ(out.admitted, 3);
  EXPECT_EQ(out.new_blocks, 3 + 3 + 2);
  for (const auto& s : out.scheduled) EXPECT_TRUE(s.admitted);
}

TEST(Schedule, ChunksPrefillAcrossSteps) {
  const SchedulerConfig c = cfg(100, 8, /*chunk=*/8);
  SchedulerState st;
  st.waiting = {waiting(1, 20, 3)};
  st.free_blocks = 100;
  ScheduleOutput out = schedule(st, c);
  ASSERT_EQ(out.scheduled.size(), 1u);
  EXPECT_EQ(out.scheduled[0].start, 0);
  EXPECT_EQ(out.scheduled[0].num_tokens, 8);
  EXPECT_FALSE(out.scheduled[0].samples);
  // Next step: running with 8 computed.
  SequenceState r = waiting(1, 20, 3);
  r.computed_len = 8;
  r.blocks_held = 2;
  st.waiting.clear();
  st.running = {r};
  out = schedule(st, c);
  ASSERT_EQ(out.scheduled.size(), 1u);
  EXPECT_EQ(out.scheduled[0].start, 8);
  EXPECT_EQ(out.scheduled[0].num_tokens, 8);
  EXPECT_FALSE(out.scheduled[0].admitted);
  r.computed_len = 16;
  r.blocks_held = 4;
  st.running = {r};
  out = schedule(st, c);
  ASSERT_EQ(out.scheduled.size(), 1u);
  EXPECT_EQ(out.scheduled[0].num_tokens, 4);
  EXPECT_TRUE(out.scheduled[0].samples);
  EXPECT_EQ(out.scheduled[0].new_blocks, 1);
}

TEST(Schedule, StartsAfterTheCachedPrefix) {
  SchedulerState st;
  SequenceState w = waiting(1, 30, 3, /*cached=*/24);
  w.cached_unreferenced_blocks = 6;
  st.waiting = {w};
  st.free_blocks = 8;  // 6 of them are the prefix's cached blocks
  ScheduleOutput out = schedule(st, cfg(100, 8, 100));
  ASSERT_EQ(out.scheduled.size(), 1u);
  EXPECT_EQ(out.scheduled[0].start, 24);
  EXPECT_EQ(out.scheduled[0].num_tokens, 6);
  EXPECT_EQ(out.scheduled[0].new_blocks, 2);
  st.free_blocks = 7;  // locking the prefix leaves 1: not enough
  EXPECT_TRUE(schedule(st, cfg(100, 8, 100)).scheduled.empty());
}

TEST(Schedule, BatchesDecodesFirstThenPrefill) {
  SchedulerState st;
  SequenceState prefilling = waiting(1, 50, 4);  // earliest, mid-prefill
  prefilling.computed_len = 10;
  prefilling.blocks_held = 3;
  st.running = {prefilling, decoding(2, 5, 1, 4), decoding(3, 9, 2, 4)};
  st.waiting = {waiting(4, 6, 2)};
  st.free_blocks = 100;
  ScheduleOutput out = schedule(st, cfg(/*budget=*/10, 8, /*chunk=*/32));
  ASSERT_EQ(out.scheduled.size(), 3u);  // no budget left to admit 4
  EXPECT_EQ(out.scheduled[0].id, 1u);
  EXPECT_EQ(out.scheduled[0].num_tokens, 8);  // the budget after two decodes
  EXPECT_EQ(find(out, 2)->num_tokens, 1);
  EXPECT_TRUE(find(out, 2)->samples);
  EXPECT_EQ(find(out, 3)->num_tokens, 1);
  EXPECT_EQ(find(out, 4), nullptr);
}

TEST(Schedule, RespectsTheBatchSize) {
  SchedulerState st;
  st.running = {decoding(1, 4, 1, 9), decoding(2, 4, 1, 9), decoding(3, 4, 1, 9)};
  st.waiting = {waiting(4, 4, 1)};
  st.free_blocks = 100;
  ScheduleOutput out = schedule(st, cfg(100, /*batch=*/2, 100));
  ASSERT_EQ(out.scheduled.size(), 2u);
  EXPECT_EQ(out.scheduled[0].id, 1u);
  EXPECT_EQ(out.scheduled[1].id, 2u);
}

TEST(Schedule, FirstComeFirstServedStopsAtTheFirstMisfit) {
  SchedulerState st;
  st.waiting = {waiting(1, 40, 2), waiting(2, 4, 2)};  // 1 needs 10 blocks, 2 needs 1
  st.free_blocks = 5;
  ScheduleOutput out = schedule(st, cfg(100, 8, 100));
  EXPECT_TRUE(out.scheduled.empty());  // 2 never overtakes 1
}

TEST(Schedule, PreemptsTheLatestArrivedWhenBlocksRunOut) {
  SchedulerState st;
  // Both at a block boundary: each decode needs a new block; none is free.
  st.running = {decoding(1, 8, 1, 9), decoding(2, 8, 1, 9)};
  st.waiting = {waiting(3, 4, 1)};
  st.free_blocks = 0;
  ScheduleOutput out = schedule(st, cfg(100, 8, 100));
  ASSERT_EQ(out.preempted, (std::vector<RequestId>{2}));
  ASSERT_EQ(out.scheduled.size(), 1u);  // nothing admitted after a preemption
  EXPECT_EQ(out.scheduled[0].id, 1u);
  EXPECT_EQ(out.scheduled[0].new_blocks, 1);
}

TEST(Schedule, PreemptionUndoesTheVictimsPlannedWork) {
  SchedulerState st;
  SequenceState early = waiting(1, 40, 2);  // earliest, mid-prefill, needs blocks
  early.computed_len = 8;
  early.blocks_held = 2;
  early.releasable_blocks = 2;
  st.running = {early, decoding(2, 8, 1, 5)};  // 2's decode (1 new block) is planned first
  st.free_blocks = 2;
  ScheduleOutput out = schedule(st, cfg(100, 8, /*chunk=*/16));
  ASSERT_EQ(out.preempted, (std::vector<RequestId>{2}));
  ASSERT_EQ(out.scheduled.size(), 1u);
  EXPECT_EQ(out.scheduled[0].id, 1u);
  EXPECT_EQ(out.scheduled[0].num_tokens, 16);
  EXPECT_EQ(out.scheduled[0].new_blocks, 4);  // 1 left + 2 released + the 1 that 2 would have taken
}

TEST(Schedule, PreemptsItselfWhenItIsTheLatest) {
  SchedulerState st;
  SequenceState s = decoding(1, 8, 1, 9);
  s.releasable_blocks = 0;  // its blocks are shared with nobody running, but cached
  st.running = {s};
  st.free_blocks = 0;
  ScheduleOutput out = schedule(st, cfg(100, 8, 100));
  EXPECT_EQ(out.preempted, (std::vector<RequestId>{1}));
  EXPECT_TRUE(out.scheduled.empty());
}

TEST(Schedule, ResumesAPreemptedSequenceByRecomputingItsTokens) {
  SchedulerState st;
  SequenceState resumed = waiting(1, 6, 5);
  resumed.generated = 3;  // sampled before preemption; never sampled again
  st.waiting = {resumed};
  st.free_blocks = 10;
  ScheduleOutput out = schedule(st, cfg(100, 8, /*chunk=*/5));
  ASSERT_EQ(out.scheduled.size(), 1u);
  EXPECT_EQ(out.scheduled[0].start, 0);
  EXPECT_EQ(out.scheduled[0].num_tokens, 5);
  EXPECT_FALSE(out.scheduled[0].samples);
  resumed.computed_len = 5;
  resumed.blocks_held = 2;
  st.waiting.clear();
  st.running = {resumed};
  out = schedule(st, cfg(100, 8, 5));
  ASSERT_EQ(out.scheduled.size(), 1u);
  EXPECT_EQ(out.scheduled[0].num_tokens, 4);  // up to prompt + generated: then sample token 4
  EXPECT_TRUE(out.scheduled[0].samples);
}

TEST(Schedule, ForksChoicesWhenThePromptIsDone) {
  SchedulerState st;
  SequenceState s = waiting(1, 10, 4);
  s.extra_choices = 2;
  st.waiting = {s};
  st.free_blocks = 5;
  ScheduleOutput out = schedule(st, cfg(100, 8, 100));
  ASSERT_EQ(out.scheduled.size(), 1u);
  EXPECT_EQ(out.scheduled[0].forks, 2);
  EXPECT_EQ(out.scheduled[0].new_blocks, 3 + 2);  // its 3 blocks + a copy of the partial block per sibling
  st.free_blocks = 4;
  EXPECT_TRUE(schedule(st, cfg(100, 8, 100)).scheduled.empty());
  s.prompt_len = 12;  // no partial block: siblings share all prompt blocks
  st.waiting = {s};
  out = schedule(st, cfg(100, 8, 100));
  ASSERT_EQ(out.scheduled.size(), 1u);
  EXPECT_EQ(out.scheduled[0].new_blocks, 3);
  EXPECT_EQ(peak_blocks(s, 4), 3 + 3 * 1);  // 15 KV tokens: 3 shared + 3 tails of 3 tokens
}

// The engine's caches are copied whole when choices fork: the plan counts
// every copy, and so does the admission limit.
TEST(Schedule, ForksThatCopyThePromptCountEveryCopy) {
  SchedulerState st;
  SequenceState s = waiting(1, 10, 4);
  s.extra_choices = 2;
  st.waiting = {s};
  SchedulerConfig copies = cfg(100, 8, 100);
  copies.forks_copy_prompt = true;
  st.free_blocks = 9;
  ScheduleOutput out = schedule(st, copies);
  ASSERT_EQ(out.scheduled.size(), 1u);
  EXPECT_EQ(out.scheduled[0].forks, 2);
  EXPECT_EQ(out.scheduled[0].new_blocks, 3 + 2 * 3);  // its 3 blocks and a copy of them per sibling
  st.free_blocks = 8;
  EXPECT_TRUE(schedule(st, copies).scheduled.empty());
  EXPECT_EQ(peak_blocks(s, 4, /*forks_copy_prompt=*/true), 3 * 4);  // 13 KV tokens, three times
  EXPECT_EQ(peak_blocks(s, 4), 2 + 3 * 2);  // shared: 2 full prompt blocks, 3 tails of 5 tokens
}

TEST(Schedule, SkipsFinishedSequences) {
  SchedulerState st;
  SequenceState done = decoding(1, 4, 3, 3);
  st.running = {done};
  st.free_blocks = 10;
  EXPECT_TRUE(schedule(st, cfg(100, 8, 100)).scheduled.empty());
}

bool same(const ScheduleOutput& a, const ScheduleOutput& b) {
  if (a.preempted != b.preempted || a.scheduled.size() != b.scheduled.size() || a.num_tokens != b.num_tokens ||
      a.new_blocks != b.new_blocks || a.admitted != b.admitted)
    return false;
  for (size_t i = 0; i < a.scheduled.size(); ++i) {
    const auto &x = a.scheduled[i], &y = b.scheduled[i];
    if (x.id != y.id || x.admitted != y.admitted || x.start != y.start || x.num_tokens != y.num_tokens ||
        x.new_blocks != y.new_blocks || x.samples != y.samples || x.forks != y.forks)
      return false;
  }
  return true;
}

// n choices decode as sequences of one request (one arrival). Slots go
// round-robin across requests, so a request with many choices leaves room
// each step for a later request, running or waiting.
TEST(Schedule, ManyChoicesShareTheBatchWithLaterRequests) {
  SchedulerState st;
  for (RequestId id = 10; id < 18; ++id) {
    SequenceState choice = decoding(id, 8, 2, 50);
    choice.arrival = 1;
    st.running.push_back(choice);
  }
  SequenceState later = waiting(20, 4, 5);
  later.arrival = 2;
  st.waiting.push_back(later);
  st.free_blocks = 100;
  ScheduleOutput out = schedule(st, cfg(100, /*batch=*/4, 100));
  ASSERT_EQ(out.scheduled.size(), 4u);
  ASSERT_NE(find(out, 20), nullptr) << "the later request is admitted";
  EXPECT_TRUE(find(out, 20)->admitted);
  for (RequestId id : {10, 11, 12}) EXPECT_NE(find(out, id), nullptr) << id;
  EXPECT_EQ(find(out, 13), nullptr);

  // Running, the later request keeps its turn each step.
  st.waiting.clear();
  SequenceState running_later = decoding(20, 4, 1, 5);
  running_later.arrival = 2;
  st.running.push_back(running_later);
  out = schedule(st, cfg(100, /*batch=*/3, 100));
  ASSERT_EQ(out.scheduled.size(), 3u);
  EXPECT_NE(find(out, 10), nullptr);
  EXPECT_NE(find(out, 20), nullptr);
  EXPECT_NE(find(out, 11), nullptr);
  // Rows stay in arrival order.
  EXPECT_EQ(out.scheduled[0].id, 10u);
  EXPECT_EQ(out.scheduled[1].id, 11u);
  EXPECT_EQ(out.scheduled[2].id, 20u);
}

TEST(Schedule, SameStateGivesTheSamePlanWhateverTheInputOrder) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
    SchedulerState st;
    for (RequestId id = 1; id <= static_cast<RequestId>(1 + pick(12)); ++id) {
      SequenceState s = waiting(id, 1 + pick(40), 1 + pick(10));
      s.arrival = static_cast<uint64_t>(pick(5));  // ties broken by id
      if (pick(2) == 0) {
        s.generated = pick(static_cast<int>(s.max_tokens));
        s.computed_len = pick(static_cast<int>(s.length()));
        s.blocks_held = blocks_for_tokens(s.computed_len, 4);
        s.releasable_blocks = pick(s.blocks_held + 1);
        st.running.push_back(s);
      } else {
        s.cached_len = pick(static_cast<int>(s.prompt_len)) / 4 * 4;
        st.waiting.push_back(s);
      }
    }
    st.free_blocks = pick(30);
    const SchedulerConfig c = cfg(1 + pick(64), 1 + pick(8), 1 + pick(16));
    const ScheduleOutput first = schedule(st, c);
    std::shuffle(st.running.begin(), st.running.end(), rng);
    std::shuffle(st.waiting.begin(), st.waiting.end(), rng);
    ASSERT_TRUE(same(first, schedule(st, c))) << "trial " << trial;
    EXPECT_LE(first.num_tokens, c.max_tokens_per_step);
    EXPECT_LE(static_cast<int32_t>(first.scheduled.size()), c.max_batch_size);
    int32_t released = 0;
    for (RequestId id : first.preempted)
      for (const auto& r : st.running)
        if (r.id == id) released += r.releasable_blocks;
    EXPECT_LE(first.new_blocks, st.free_blocks + released);
  }
}

}  // namespace
}  // namespace reprox::engine::sched
