// The batching engine's lifecycle: requests share passes, a request with
// many choices leaves room for later ones, chunked prefill gives the same
// answer as one-piece prefill, a cancelled request's
// sequences (and their KV) are gone by the next pass, a request too large
// for the KV working memory is refused with 400 before it is queued, and so
// are sampling parameters out of range.
#include <chrono>
#include <future>
#include <thread>

#include "tests/engine/runtime/batch_fixture.hpp"

namespace reprox::engine::batching_test {
namespace {

class BatchLifecycleTest : public BatchFixture {
 protected:
  static void SetUpTestSuite() { dir_ = new std::string(make_model("lifecycle")); }
  static void TearDownTestSuite() {
    std::filesystem::remove_all(*dir_);
    delete dir_;
  }
  static EngineOptions options() {
    EngineOptions o;
    o.model_dir = *dir_;
    o.kv_budget_bytes = 0;
    return o;
  }
  // Polls `pred` every 5 ms for up to 20 s (a bound, not a speed check).
  template <typename Pred>
  static bool eventually(Pred pred) {
    for (int i = 0; i < 4000; ++i) {
      if (pred()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return pred();
  }
  static std::string* dir_;
};

std::string* BatchLifecycleTest::dir_ = nullptr;

// Resolves with the job's completion tokens, or -1 - the error code.
struct CompletionTokens final : EngineSink {
  void on_event(GenEvent) override {}
  void on_complete(const Usage& u, const std::string&) override { result.set_value(u.completion_tokens); }
  void on_error(const EngineError& e) override { result.set_value(-1 - static_cast<int64_t>(e.code)); }
  std::promise<int64_t> result;
};

TEST_F(BatchLifecycleTest, ConcurrentRequestsShareModelPasses) {
  LocalBackend engine(options());
  Sampling s;
  s.max_tokens = 24;
  std::vector<Running> runs;
  for (int i = 0; i < 8; ++i) runs.push_back(start(engine, request(engine, "request " + std::to_string(i), s)));
  for (auto& r : runs) EXPECT_FALSE(finish(r).empty());
  const BatchStats stats = engine.engine().batch_stats();
  EXPECT_GE(stats.max_rows, 4u);
  EXPECT_LT(stats.steps, 8u * 24u) << "every token had a pass of its own";
}

// A request with more choices than a pass holds does not keep a later
// request waiting until all of them are done: the later one is answered
// while the first still runs.
TEST_F(BatchLifecycleTest, ManyChoicesDoNotHoldALaterRequestBack) {
  EngineOptions o = options();
  o.max_batch_size = 4;
  LocalBackend engine(o);
  Sampling wide;
  wide.n = 12;
  wide.max_tokens = 40;
  wide.ignore_eos = true;
  Running first = start(engine, request(engine, "many answers, please", wide));
  Sampling narrow;
  narrow.max_tokens = 3;
  narrow.ignore_eos = true;
  Running later = start(engine, request(engine, "one short answer", narrow));
  EXPECT_FALSE(finish(later).empty());
  // 12 x 40 tokens through 4 rows take at least 120 passes; the later
  // request needed a handful.
  EXPECT_EQ(first.done.wait_for(std::chrono::seconds(0)), std::future_status::timeout)
      << "the later request waited for every choice of the first";
  EXPECT_FALSE(finish(first).empty());
}

TEST_F(BatchLifecycleTest, ChunkedPrefillAnswersExactlyAsOnePiece) {
  EngineOptions o = options();
  o.prefill_chunk = 512;
  LocalBackend whole(o);
  o.prefill_chunk = 7;
  o.max_step_tokens = 16;
  LocalBackend chunked(o);
  std::mt19937 rng(5);
  const std::string text = random_text(rng, 150);  // a few hundred tokens
  for (int i = 0; i < 4; ++i) {
    Sampling s = random_sampling(rng);
    s.logprobs = true;
    Running a = start(whole, request(whole, text, s));
    Running b = start(chunked, request(chunked, text, s));
    EXPECT_EQ(finish(b), finish(a)) << "setting " << i;
  }
  EXPECT_GT(chunked.engine().batch_stats().steps, whole.engine().batch_stats().steps + 20);
}

TEST_F(BatchLifecycleTest, CancellingARunningRequestFreesItsSequencesAtOnce) {
  LocalBackend engine(options());
  Sampling s;
  s.max_tokens = 480;
  s.n = 3;
  Running run = start(engine, request(engine, "a long story, please", s));
  ASSERT_TRUE(eventually([&] { return engine.engine().batch_stats().running == 3; }));
  run.handle.reset();  // the client went away
  ASSERT_TRUE(eventually([&] {
    const BatchStats st = engine.engine().batch_stats();
    return st.running == 0 && st.waiting == 0;
  }));
  EXPECT_EQ(run.done.wait_for(std::chrono::seconds(0)), std::future_status::timeout)
      << "a cancelled request must not complete";
  // The engine goes on serving.
  Sampling quick;
  quick.max_tokens = 4;
  Running next = start(engine, request(engine, "hello", quick));
  EXPECT_FALSE(finish(next).empty());
}

TEST_F(BatchLifecycleTest, ARequestLargerThanTheWorkingMemoryIsA400) {
  EngineOptions o = options();
  o.working_kv_bytes = 1;  // clamped up to one full context
  LocalBackend engine(o);
  Sampling s;
  s.n = 8;
  s.max_tokens = 400;
  auto sink = std::make_shared<Collect>();
  api::ApiError err;
  EXPECT_EQ(engine.generate(request(engine, "hi", s), sink, &err), nullptr);
  EXPECT_EQ(err.status, 400);
  EXPECT_EQ(err.param, "max_tokens");
  s.n = 1;  // alone it fits
  Running ok = start(engine, request(engine, "hi", s));
  EXPECT_FALSE(finish(ok).empty());
}

// Choices fork by copying the prompt's KV, so n copies must fit the working
// memory. One context here is 32 blocks of 16 tokens; a 200-token prompt
// with 60 more tokens holds 17. Two choices need 34: refused up front
// (counting the 12 full prompt blocks once, as shared, the limit let it in).
TEST_F(BatchLifecycleTest, ChoicesThatCannotAllFitTheWorkingMemoryAreRefused) {
  EngineOptions o = options();
  o.working_kv_bytes = 1;  // clamped up to one full context
  LocalBackend backend(o);
  const auto job = [](int n) {
    EngineJob j;
    for (int32_t i = 0; i < 200; ++i) j.prompt.push_back(300 + i);
    j.max_tokens = 60;
    j.sampling.n = n;
    j.sampling.seed = 1;
    return j;
  };
  const std::optional<EngineError> refused = backend.engine().submit(job(2));
  ASSERT_TRUE(refused.has_value());
  EXPECT_EQ(refused->code, EngineErrc::kTooLarge);
  auto sink = std::make_shared<CompletionTokens>();
  std::future<int64_t> done = sink->result.get_future();
  EngineJob alone = job(1);
  alone.sink = sink;
  ASSERT_FALSE(backend.engine().submit(std::move(alone)).has_value()) << "one choice fits";
  ASSERT_EQ(done.wait_for(std::chrono::seconds(60)), std::future_status::ready);
  EXPECT_GE(done.get(), 1);
}

// An engine job submitted with no cancel flag (the flag is the owner's, and
// an owner that never cancels may leave it out) runs to completion; the
// engine thread used to dereference the missing flag.
TEST_F(BatchLifecycleTest, AJobWithoutACancelFlagRuns) {
  LocalBackend backend(options());
  auto sink = std::make_shared<CompletionTokens>();
  std::future<int64_t> done = sink->result.get_future();
  EngineJob job;
  job.prompt = {300, 301, 302};
  job.max_tokens = 3;
  job.sampling.seed = 1;
  job.sink = sink;
  ASSERT_FALSE(job.cancelled);
  ASSERT_FALSE(backend.engine().submit(std::move(job)).has_value());
  ASSERT_EQ(done.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  EXPECT_GE(done.get(), 1);
}

// The sampler trusts its parameters, so submit() checks them: a logit_bias
// id past the vocabulary, or an n the scheduler cannot fork, is refused
// before it is queued.
TEST_F(BatchLifecycleTest, SamplingParametersOutOfRangeAreRefusedAtSubmit) {
  LocalBackend backend(options());
  const int32_t vocab = backend.engine().vocab_size();
  ASSERT_GT(vocab, 0);
  const auto job = [](SamplingParams p) {
    EngineJob j;
    j.prompt = {300, 301, 302};
    j.max_tokens = 2;
    j.sampling = p;
    return j;
  };
  SamplingParams bias_past;
  bias_past.logit_bias = {{vocab, 5.0}};
  SamplingParams bias_negative;
  bias_negative.logit_bias = {{-1, 5.0}};
  SamplingParams no_choices;
  no_choices.n = 0;
  for (const SamplingParams& p : {bias_past, bias_negative, no_choices}) {
    const std::optional<EngineError> refused = backend.engine().submit(job(p));
    ASSERT_TRUE(refused.has_value());
    EXPECT_EQ(refused->code, EngineErrc::kInvalidSampling) << refused->message;
  }
  // The last id is in range: the job runs to its end.
  SamplingParams last_id;
  last_id.logit_bias = {{vocab - 1, 5.0}};
  EngineJob accepted = job(last_id);
  auto sink = std::make_shared<CompletionTokens>();
  std::future<int64_t> done = sink->result.get_future();
  accepted.sink = sink;
  ASSERT_FALSE(backend.engine().submit(std::move(accepted)).has_value());
  ASSERT_EQ(done.wait_for(std::chrono::seconds(20)), std::future_status::ready);
  EXPECT_GE(done.get(), 1);
}

}  // namespace
}  // namespace reprox::engine::batching_test
