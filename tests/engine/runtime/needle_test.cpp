// The needle test: a request's answer, alone on the engine, must be
// bitwise identical (text, logprobs, finish reasons, usage) to the same
// request inside random concurrent batches of up to 16 requests with random
// sampling settings. Every request of a batch is checked against its own
// solo run, so each one is a needle. Two batched engines: one with ample KV
// working memory, one so tight that sequences are preempted and recomputed,
// with conversation reuse on.
#include "tests/engine/runtime/batch_fixture.hpp"

namespace reprox::engine::batching_test {
namespace {

class NeedleTest : public BatchFixture {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(make_model("needle"));
    EngineOptions o;
    o.model_dir = *dir_;
    o.kv_budget_bytes = 0;
    o.max_batch_size = 1;  // strictly one sequence at a time
    solo_ = new LocalBackend(o);
    o.max_batch_size = 16;
    o.queue_capacity = 64;
    batched_ = new LocalBackend(o);
    o.kv_budget_bytes = 4 << 20;
    o.working_kv_bytes = 1;  // clamped up to one full context (512 tokens): sequences get preempted
    o.prefill_chunk = 24;
    o.threads = 2;  // kernel threads are process-wide: from here on every engine runs 2 (bits never depend on it)
    tight_ = new LocalBackend(o);
  }
  static void TearDownTestSuite() {
    delete solo_;
    delete batched_;
    delete tight_;
    std::filesystem::remove_all(*dir_);
    delete dir_;
  }

  static std::string* dir_;
  static LocalBackend* solo_;
  static LocalBackend* batched_;
  static LocalBackend* tight_;
};

std::string* NeedleTest::dir_ = nullptr;
LocalBackend* NeedleTest::solo_ = nullptr;
LocalBackend* NeedleTest::batched_ = nullptr;
LocalBackend* NeedleTest::tight_ = nullptr;

TEST_F(NeedleTest, EveryRequestInARandomBatchAnswersAsItDoesAlone) {
#ifdef REPROX_SANITIZER_BUILD
  // Sanitized, the model runs 10-20x slower: three batches of 16 still hand
  // every sequence between the threads.
  constexpr int kTrials = 3;
#else
  constexpr int kTrials = 24;
#endif
  std::mt19937 rng(20261202);
  int requests = 0, largest = 0;
  for (int trial = 0; trial < kTrials; ++trial) {
    const int k = trial < 4 ? 16 : std::uniform_int_distribution<int>(2, 16)(rng);
    largest = std::max(largest, k);
    std::vector<std::string> texts;
    std::vector<Sampling> settings;
    std::vector<std::string> alone;
    for (int i = 0; i < k; ++i) {
      texts.push_back(random_text(rng, std::uniform_int_distribution<int>(1, 40)(rng)));
      settings.push_back(random_sampling(rng));
      Running run = start(*solo_, request(*solo_, texts[i], settings[i]));
      alone.push_back(finish(run));
      ASSERT_FALSE(alone.back().empty());
    }
    for (LocalBackend* engine : {batched_, tight_}) {
      std::vector<int> order(k);
      for (int i = 0; i < k; ++i) order[i] = i;
      std::shuffle(order.begin(), order.end(), rng);
      std::vector<Running> runs(k);
      for (int i : order) runs[i] = start(*engine, request(*engine, texts[i], settings[i]));
      for (int i = 0; i < k; ++i) {
        EXPECT_EQ(finish(runs[i]), alone[i])
            << (engine == batched_ ? "batched" : "tight") << " engine, trial " << trial << ", request " << i
            << " of " << k << ": \"" << texts[i] << "\" temperature " << settings[i].temperature << " n "
            << settings[i].n;
      }
    }
    requests += k;
  }
  EXPECT_EQ(largest, 16);
  const BatchStats batched = batched_->engine().batch_stats();
  const BatchStats tight = tight_->engine().batch_stats();
  const BatchStats solo = solo_->engine().batch_stats();
  EXPECT_EQ(solo.max_rows, 1u);
  EXPECT_GE(batched.max_rows, 8u) << "the batches never grew: the test would prove nothing";
  EXPECT_GT(tight.preemptions, 0u) << "the tight engine never preempted";
  std::cout << "needle: " << requests << " requests in " << kTrials << " trials; batched engine: " << batched.steps
            << " passes, " << batched.rows << " rows, largest batch " << batched.max_rows << "; tight engine: "
            << tight.preemptions << " preemptions, largest batch " << tight.max_rows << "\n";
}

}  // namespace
}  // namespace reprox::engine::batching_test
