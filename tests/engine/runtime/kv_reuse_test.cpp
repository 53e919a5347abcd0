// Conversation-level KV reuse through the LocalBackend: later turns reuse the
// earlier turns' KV (usage.cached_tokens > 0) and answer bit-identically to an
// engine without reuse, also under a budget small enough to force evictions;
// a tenant never reuses another tenant's KV. The same with 16-bit and q8
// weight storage.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <future>
#include <unistd.h>

#include "tests/support/chat_request_builder.hpp"
#include "tests/support/collect_sink.hpp"
#include "engine/runtime/engine.hpp"
#include "proxy/backend/local_backend.hpp"
#include "engine/tiny/make_tiny_model.hpp"

namespace reprox::engine {
namespace {

using Collect = testing_support::CollectSink;

using testing_support::Sampling;

Sampling mixed_sampling(int i) {
  Sampling s;
  static const double temps[] = {0.0, 0.7, 1.0, 1.3};
  s.temperature = temps[i % 4];
  s.top_p = (i % 3 == 1) ? 0.9 : 1.0;
  s.top_k = (i % 5 == 2) ? 20 : 0;
  s.presence_penalty = (i % 7 == 3) ? 0.5 : 0.0;
  s.repetition_penalty = (i % 5 == 1) ? 1.25 : 1.0;  // over the prompt too: reused KV must not change it
  s.min_p = (i % 4 == 2) ? 0.05 : 0.0;
  if (i % 5 == 3) {  // "." likely, ending the choice after at least 3 tokens
    s.logit_bias = {{13, 5.0}};
    s.stop_token_ids = {13};
    s.min_tokens = 3;
  }
  s.logprobs = i % 2 == 0;
  s.top_logprobs = s.logprobs ? i % 3 : 0;
  s.n = (i % 6 == 5) ? 2 : 1;
  s.max_tokens = 10 + (i * 7) % 30;
  s.seed = 1000 + i;
  return s;
}

const char* kUserTurns[] = {
    "Tell me about the history of the city and its bridges, in a few sentences please.",
    "Thanks. Now compare it with the river crossings of another old European capital.",
    "Finally, summarise both answers in one short paragraph for a travel guide.",
};

class KvReuseTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(make_preset_model("tiny", "kv-reuse", 1024, REPROX_NPM_FIXTURES_DIR));
    EngineOptions o;
    o.model_dir = *dir_;
    o.kv_budget_bytes = 0;
    plain_ = new LocalBackend(o);
    o.kv_budget_bytes = 64ll << 20;
    reuse_ = new LocalBackend(o);
    // About 12 blocks of the tiny model (2 layers x 2 kv heads x 32 dims x
    // fp32 = 512 bytes a token, 8 KiB a block): a few conversations' worth.
    o.kv_budget_bytes = 12 * 16 * 512;
    small_ = new LocalBackend(o);
  }
  static void TearDownTestSuite() {
    delete plain_;
    delete reuse_;
    delete small_;
    std::filesystem::remove_all(*dir_);
    delete dir_;
  }

  static std::shared_ptr<BackendRequest> request(LocalBackend* b, const std::vector<api::ChatMessage>& messages,
                                                 const Sampling& s, const std::string& tenant) {
    return testing_support::chat_request(b->models().front().id, messages, s, tenant);
  }

  static std::shared_ptr<Collect> run(LocalBackend* b, std::shared_ptr<BackendRequest> r) {
    auto sink = std::make_shared<Collect>();
    auto done = sink->done.get_future();
    api::ApiError err;
    auto handle = b->generate(r, sink, &err);
    EXPECT_TRUE(handle) << err.to_json();
    if (handle) sink->ok = done.get();
    EXPECT_TRUE(sink->ok) << sink->error.to_json();
    return sink;
  }

  static api::ChatMessage message(const std::string& role, const std::string& content) {
    return testing_support::chat_message(role, content);
  }

  struct TurnStats {
    int turns = 0;
    int reused_turns = 0;          // cached_tokens > 0
    int checked_turns = 0;         // n == 1 turns, where the previous turn's stored blocks are known
    int fully_reused_turns = 0;    // ... of those, every stored block of the previous turn matched
    int64_t cached_tokens = 0;
    int64_t prompt_tokens = 0;
  };

  // Runs a 3-turn conversation on `reference` (default plain_) and on
  // `other`, expecting identical answers; the history follows the reference.
  static void converse(LocalBackend* other, int index, const std::string& tenant, TurnStats* stats,
                       LocalBackend* reference = nullptr) {
    LocalBackend* ref = reference != nullptr ? reference : plain_;
    const Sampling s = mixed_sampling(index);
    std::vector<api::ChatMessage> messages{message("system", "You are a concise assistant. Conversation " + std::to_string(index) + ".")};
    int64_t previous_kv_tokens = 0;  // prompt + completion - 1 of the previous turn
    for (int turn = 0; turn < 3; ++turn) {
      messages.push_back(message("user", kUserTurns[turn]));
      auto want = run(ref, request(ref, messages, s, tenant));
      auto got = run(other, request(other, messages, s, tenant));
      ASSERT_EQ(got->transcript(), want->transcript()) << "conversation " << index << " turn " << turn + 1;
      EXPECT_EQ(want->usage.cached_tokens, 0);
      if (turn > 0 && stats) {
        ++stats->turns;
        stats->cached_tokens += got->usage.cached_tokens;
        stats->prompt_tokens += got->usage.prompt_tokens;
        if (got->usage.cached_tokens > 0) ++stats->reused_turns;
        if (previous_kv_tokens > 0) {
          ++stats->checked_turns;
          if (got->usage.cached_tokens >= previous_kv_tokens / 16 * 16) ++stats->fully_reused_turns;
        }
      }
      // Choice 0 of an n > 1 answer stands for the assistant; its completion
      // count is not separable, so "fully reused" is judged on n == 1 only.
      previous_kv_tokens = s.n == 1 ? got->usage.prompt_tokens + got->usage.completion_tokens - 1 : 0;
      messages.push_back(message("assistant", want->text(0)));
    }
  }

  static std::string* dir_;
  static LocalBackend* plain_;
  static LocalBackend* reuse_;
  static LocalBackend* small_;
};

std::string* KvReuseTest::dir_ = nullptr;
LocalBackend* KvReuseTest::plain_ = nullptr;
LocalBackend* KvReuseTest::reuse_ = nullptr;
LocalBackend* KvReuseTest::small_ = nullptr;

TEST_F(KvReuseTest, LaterTurnsReuseKvAndAnswerIdentically) {
  constexpr int kConversations = 100;
  TurnStats stats;
  for (int i = 0; i < kConversations; ++i) {
    converse(reuse_, i, "tenant-" + std::to_string(i % 7), &stats);
    if (HasFatalFailure()) return;
  }
  EXPECT_EQ(stats.reused_turns, stats.turns);
  const auto counters = reuse_->engine().kv_counters();
  EXPECT_GT(counters.hits, 0u);
  EXPECT_GT(counters.bytes_held, 0);
  EXPECT_EQ(counters.reused_tokens, static_cast<uint64_t>(stats.cached_tokens));
  std::printf("kv reuse: %d later turns, %d reused; %d of %d (n = 1) reused every stored block of the previous turn "
              "(the answer re-tokenized to the sampled ids); %lld of %lld prompt tokens cached\n",
              stats.turns, stats.reused_turns, stats.fully_reused_turns, stats.checked_turns, static_cast<long long>(stats.cached_tokens),
              static_cast<long long>(stats.prompt_tokens));
}

TEST_F(KvReuseTest, EvictionsUnderATinyBudgetKeepAnswersIdentical) {
  TurnStats stats;
  for (int i = 0; i < 20; ++i) {
    converse(small_, i, "tenant-" + std::to_string(i % 3), &stats);
    if (HasFatalFailure()) return;
  }
  const auto counters = small_->engine().kv_counters();
  EXPECT_GT(counters.evictions, 0u);
  EXPECT_GT(counters.hits, 0u);
  EXPECT_LE(counters.bytes_held, 12 * 16 * 512);
}

TEST_F(KvReuseTest, TheBlockSizeNeverChangesAnAnswer) {
  // Reuse granularity changes which positions come from the cache and which
  // are recomputed, never a bit of the answer.
  for (int32_t block_size : {4, 48}) {
    EngineOptions o;
    o.model_dir = *dir_;
    o.kv_budget_bytes = 16ll << 20;
    o.kv_block_size = block_size;
    LocalBackend engine(o);
    TurnStats stats;
    for (int i = 0; i < 8; ++i) {
      converse(&engine, 200 + i, "tenant", &stats);
      if (HasFatalFailure()) return;
    }
    EXPECT_GT(stats.reused_turns, 0) << "block size " << block_size;
    EXPECT_EQ(stats.cached_tokens % block_size, 0) << "reuse is in whole blocks";
  }
}

TEST_F(KvReuseTest, ATenantNeverReusesAnotherTenantsKv) {
  Sampling s;
  s.temperature = 0;
  s.max_tokens = 12;
  std::vector<api::ChatMessage> messages{message("system", "You are a concise assistant. Isolation."),
                                         message("user", kUserTurns[0])};
  auto first = run(reuse_, request(reuse_, messages, s, "tenant-a"));
  messages.push_back(message("assistant", first->text(0)));
  messages.push_back(message("user", kUserTurns[1]));
  auto other = run(reuse_, request(reuse_, messages, s, "tenant-b"));
  EXPECT_EQ(other->usage.cached_tokens, 0);
  auto same = run(reuse_, request(reuse_, messages, s, "tenant-a"));
  EXPECT_GT(same->usage.cached_tokens, 0);
  EXPECT_EQ(same->transcript(), other->transcript());
}

TEST_F(KvReuseTest, NoReuseWithoutABudget) {
  Sampling s;
  s.temperature = 0;
  s.max_tokens = 4;
  std::vector<api::ChatMessage> messages{message("user", kUserTurns[0])};
  run(plain_, request(plain_, messages, s, "t"));
  auto again = run(plain_, request(plain_, messages, s, "t"));
  EXPECT_EQ(again->usage.cached_tokens, 0);
  EXPECT_EQ(plain_->engine().kv_counters().lookups, 0u);
}

TEST_F(KvReuseTest, SixteenBitAndQ8WeightsAnswerIdenticallyWithAndWithoutReuse) {
  std::vector<std::string> fingerprints{plain_->engine().system_fingerprint()};
  for (const std::string weights : {"bf16", "q8"}) {
    EngineOptions o;
    o.model_dir = *dir_;
    o.weights = weights;
    o.kv_budget_bytes = 0;
    LocalBackend without(o);
    o.kv_budget_bytes = 64ll << 20;
    LocalBackend with(o);
    EXPECT_EQ(without.engine().system_fingerprint(), with.engine().system_fingerprint());
    fingerprints.push_back(with.engine().system_fingerprint());
    TurnStats stats;
    for (int i = 0; i < 12; ++i) {
      converse(&with, 300 + i, "tenant-" + std::to_string(i % 3), &stats, &without);
      if (HasFatalFailure()) return;
    }
    EXPECT_EQ(stats.reused_turns, stats.turns) << weights;
  }
  EXPECT_NE(fingerprints[0], fingerprints[1]);
  EXPECT_NE(fingerprints[0], fingerprints[2]);
  EXPECT_NE(fingerprints[1], fingerprints[2]);
}

TEST_F(KvReuseTest, TheFastModeNeverReusesKv) {
  // libtorch's kernels make a reused position differ in low-order bits from
  // a recomputed one, so the fast mode turns reuse off whatever the budget.
  EngineOptions o;
  o.model_dir = *dir_;
  o.numeric_mode = "fast";
  o.kv_budget_bytes = 64ll << 20;
  LocalBackend fast(o);
  Sampling s;
  s.temperature = 0;
  s.max_tokens = 4;
  std::vector<api::ChatMessage> messages{message("user", kUserTurns[0])};
  run(&fast, request(&fast, messages, s, "t"));
  auto again = run(&fast, request(&fast, messages, s, "t"));
  EXPECT_EQ(again->usage.cached_tokens, 0);
  EXPECT_EQ(fast.engine().kv_counters().lookups, 0u);
}

}  // namespace
}  // namespace reprox::engine
