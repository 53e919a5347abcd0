// Fast mode with the running sequences' KV in slots (engine.kv_slots "on"):
// on the CPU this is the code path a GPU runs (slots, fixed-shape decode
// steps), run eagerly. Every kind of request (sampled, n > 1 forks, prompts
// and answers longer than a slot, more requests than slots) finishes and
// gives its slot back; a request alone gives the same bytes run to run and
// in another engine; the slots and the fixed shapes are in the fingerprint.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "engine/model/model_config.hpp"
#include "tests/engine/runtime/batch_fixture.hpp"

namespace reprox::engine::batching_test {
namespace {

constexpr int32_t kSlots = 4;
constexpr int64_t kSlotPositions = 64;

class FastSlotsTest : public BatchFixture {
 protected:
  static void SetUpTestSuite() { dir_ = new std::string(make_model("fast_slots")); }
  static void TearDownTestSuite() {
    std::filesystem::remove_all(*dir_);
    delete dir_;
  }

  // Fast mode on the CPU with kSlots slots of kSlotPositions positions.
  static EngineOptions options(const std::string& kv_slots = "on") {
    const ModelConfig c = load_model_config(*dir_);
    EngineOptions o;
    o.model_dir = *dir_;
    o.numeric_mode = "fast";
    o.kv_slots = kv_slots;
    o.max_batch_size = kSlots;
    o.queue_capacity = 32;
    o.working_kv_bytes = kSlots * kSlotPositions * 2 * c.n_layers * c.n_kv_heads * c.head_dim * 4;
    return o;
  }

  static std::string alone(LocalBackend& b, const std::string& text, const Sampling& s) {
    Running run = start(b, request(b, text, s));
    return finish(run);
  }

  static std::string* dir_;
};

std::string* FastSlotsTest::dir_ = nullptr;

TEST_F(FastSlotsTest, EveryKindOfRequestFinishesAndGivesItsSlotBack) {
  LocalBackend backend(options());
  std::mt19937 rng(20261206);
  std::vector<std::pair<std::string, Sampling>> work;
  for (int i = 0; i < 6; ++i) work.emplace_back(random_text(rng, 1 + i * 3), random_sampling(rng));
  Sampling forks;
  forks.n = 3;
  forks.max_tokens = 12;
  work.emplace_back("three choices of one prompt", forks);
  Sampling long_answer;
  long_answer.temperature = 0;
  long_answer.max_tokens = kSlotPositions + 20;  // outgrows its slot while decoding
  work.emplace_back("a long answer", long_answer);
  Sampling short_answer;
  short_answer.max_tokens = 6;
  work.emplace_back(random_text(rng, 90), short_answer);  // a prompt longer than a slot

  // The fewest free slots seen while the requests run: they do take slots.
  std::atomic<bool> watching{true};
  std::atomic<uint32_t> fewest_free{kSlots};
  std::thread watcher([&] {
    while (watching) {
      fewest_free = std::min(fewest_free.load(), backend.engine().batch_stats().free_kv_slots);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });
  std::vector<Running> runs;
  for (const auto& [text, s] : work) runs.push_back(start(backend, request(backend, text, s)));
  for (Running& run : runs) {
    const std::string transcript = finish(run);
    EXPECT_FALSE(transcript.empty());
    EXPECT_GT(run.sink->usage.completion_tokens, 0);
  }
  watching = false;
  watcher.join();
  EXPECT_EQ(fewest_free.load(), 0u);  // more requests than slots: all were taken at some point
  EXPECT_GT(runs[7].sink->usage.prompt_tokens + runs[7].sink->usage.completion_tokens, kSlotPositions);
  EXPECT_GT(runs[8].sink->usage.prompt_tokens, kSlotPositions);

  // The counters are published after each step, so shortly after the last answer.
  BatchStats stats;
  for (int i = 0; i < 500; ++i) {
    stats = backend.engine().batch_stats();
    if (stats.free_kv_slots == static_cast<uint32_t>(kSlots) && stats.running == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(stats.free_kv_slots, static_cast<uint32_t>(kSlots));
  EXPECT_EQ(stats.running, 0u);
  EXPECT_GT(stats.max_rows, 1u);  // requests shared steps
}

TEST_F(FastSlotsTest, ARequestAloneGivesTheSameBytesRunToRunAndInAnotherEngine) {
  LocalBackend first(options());
  LocalBackend second(options());
  std::mt19937 rng(7);
  for (int i = 0; i < 4; ++i) {
    const std::string text = random_text(rng, 2 + 5 * i);
    Sampling s = random_sampling(rng);
    s.max_tokens = 10 + 4 * i;
    if (i == 3) s.n = 2;
    const std::string want = alone(first, text, s);
    ASSERT_FALSE(want.empty());
    EXPECT_EQ(alone(first, text, s), want) << "request " << i;
    EXPECT_EQ(alone(second, text, s), want) << "request " << i;
  }
}

TEST_F(FastSlotsTest, TheFingerprintNamesTheSlotsAndTheFixedShapes) {
  LocalBackend slots(options("on"));
  LocalBackend own_caches(options("off"));
  LocalBackend automatic(options("auto"));  // the CPU: no slots
  EngineOptions eager = options("on");
  eager.cuda_graphs = false;
  LocalBackend slots_only(eager);
  EXPECT_NE(slots.fingerprint(""), own_caches.fingerprint(""));
  EXPECT_NE(slots.fingerprint(""), slots_only.fingerprint(""));
  EXPECT_NE(slots_only.fingerprint(""), own_caches.fingerprint(""));
  EXPECT_EQ(automatic.fingerprint(""), own_caches.fingerprint(""));
  EXPECT_EQ(LocalBackend(options("on")).fingerprint(""), slots.fingerprint(""));
}

TEST_F(FastSlotsTest, SettingsTheSlotsCannotHonourStopStartUp) {
  EngineOptions strict = options("on");
  strict.numeric_mode = "strict";
  EXPECT_THROW(LocalBackend{strict}, std::runtime_error);
  EngineOptions unknown = options("yes");
  EXPECT_THROW(LocalBackend{unknown}, std::runtime_error);
  EngineOptions tiny_memory = options("on");
  tiny_memory.working_kv_bytes = 1024;
  EXPECT_THROW(LocalBackend{tiny_memory}, std::runtime_error);
}

}  // namespace
}  // namespace reprox::engine::batching_test
