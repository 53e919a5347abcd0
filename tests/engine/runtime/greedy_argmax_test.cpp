// A greedy draw with nothing else to apply (no logit_bias, penalty or
// logprobs) takes the argmax the model returns instead of sampling the row
// on the host (step_output.hpp). It must give the tokens the host's sampler
// gives: the same greedy request with logprobs, which samples the whole
// row, is the reference. The model's lm_head is wider than the tokenizer's
// vocabulary (padded, as many checkpoints are), so an argmax over every
// column could pick an id the sampler never draws.
#include "engine/model/model_config.hpp"
#include "engine/tiny/make_tiny_model.hpp"
#include "tests/engine/runtime/batch_fixture.hpp"

namespace reprox::engine::batching_test {
namespace {

class GreedyArgmaxTest : public BatchFixture, public ::testing::WithParamInterface<const char*> {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(::testing::TempDir() + "reprox-greedy-argmax-" + std::to_string(::getpid()));
    TinyModelOptions o;
    o.out_dir = *dir_;
    o.arch = "llama";
    o.npm_fixtures_dir = REPROX_NPM_FIXTURES_DIR;
    o.max_positions = 512;
    make_tiny_model(o);
    const int64_t tokenizer_ids = load_model_config(*dir_).vocab_size;
    o.vocab_size = tokenizer_ids + 4000;  // a wide lm_head: 4,000 ids past the tokenizer
    make_tiny_model(o);
  }
  static void TearDownTestSuite() {
    std::filesystem::remove_all(*dir_);
    delete dir_;
  }
  static EngineOptions options() {
    EngineOptions o;
    o.model_dir = *dir_;
    o.numeric_mode = GetParam();
    o.max_batch_size = 4;
    o.queue_capacity = 16;
    return o;
  }
  // Each request's content (choice 0), all submitted together.
  static std::vector<std::string> answers(LocalBackend& b, const std::vector<std::string>& prompts, bool logprobs) {
    Sampling s;
    s.temperature = 0;
    s.max_tokens = 24;
    s.logprobs = logprobs;
    std::vector<Running> runs;
    for (const std::string& p : prompts) runs.push_back(start(b, request(b, p, s)));
    std::vector<std::string> out;
    for (Running& run : runs) {
      finish(run);
      out.push_back(run.sink->text());
    }
    return out;
  }
  static std::string* dir_;
};

std::string* GreedyArgmaxTest::dir_ = nullptr;

TEST_P(GreedyArgmaxTest, TheArgmaxGivesTheTokensTheSamplerGives) {
  LocalBackend backend(options());
  ASSERT_GT(load_model_config(*dir_).vocab_size, static_cast<int64_t>(backend.engine().tokenizer()->vocab_size()));
  const std::vector<std::string> prompts = {"the river", "a cat on a map", "seven blue bridges to Paris", "tea"};
  const std::vector<std::string> argmax = answers(backend, prompts, false);
  const std::vector<std::string> sampled = answers(backend, prompts, true);
  for (size_t i = 0; i < prompts.size(); ++i) {
    EXPECT_FALSE(argmax[i].empty()) << prompts[i];
    EXPECT_EQ(argmax[i], sampled[i]) << prompts[i];
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, GreedyArgmaxTest, ::testing::Values("strict", "fast"));

}  // namespace
}  // namespace reprox::engine::batching_test
