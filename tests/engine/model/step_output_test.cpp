// What leaves the device after a step (step_output.hpp): the argmax a
// device computes is the token the host's greedy sampler draws from the
// same logits, ties, NaN and infinities included; the widened logits are
// the logits; and forward_batch with argmax_only rows returns the other
// rows' logits unchanged.
#include <gtest/gtest.h>

#include <torch/types.h>

#include <cmath>
#include <limits>
#include <random>

#include "engine/model/model.hpp"
#include "engine/model/step_output.hpp"
#include "engine/sampling/sampler.hpp"
#include "tests/engine/model/model_test_util.hpp"

namespace reprox {
namespace {

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

engine::SamplingParams greedy() {
  engine::SamplingParams p;
  p.temperature = 0.0;
  return p;
}

// The token the host's greedy sampler draws from a float32 row; -1 when it refuses.
int32_t sampled(const torch::Tensor& row) {
  const torch::Tensor f = row.to(torch::kFloat32).contiguous();
  engine::Sampler sampler(greedy(), static_cast<int32_t>(f.numel()), 0);
  engine::SampleResult out;
  return sampler.sample(f.data_ptr<float>(), &out) == engine::SampleStatus::kOk ? out.token : -1;
}

// Rows that stress the tie and non-finite rules, then random rows.
torch::Tensor hard_rows(int64_t vocab) {
  std::vector<std::vector<float>> rows = {
      {1, 3, 3, 2},              // tie: the lower id
      {kNan, 1, kNan, 1},        // NaN is impossible, not the largest
      {kInf, 0.5f, -2, 0.5f},    // +inf is impossible too
      {-kInf, -kInf, -7, -kInf},  // one finite value
      {kNan, -kInf, kInf, kNan},  // none finite
      {-0.0f, 0.0f, -1, -1},     // -0 and 0 are equal: the lower id
  };
  torch::Tensor out = torch::empty({static_cast<int64_t>(rows.size()) + 8, vocab});
  out.normal_(0, 3, at::detail::getDefaultCPUGenerator());
  for (size_t r = 0; r < rows.size(); ++r) {
    out[static_cast<int64_t>(r)].fill_(-kInf);
    for (size_t i = 0; i < rows[r].size(); ++i) out[static_cast<int64_t>(r)][static_cast<int64_t>(i * 7)] = rows[r][i];
  }
  // Random rows with their largest value repeated at a higher id.
  for (int64_t r = static_cast<int64_t>(rows.size()); r < out.size(0); r += 2) {
    const int64_t top = out[r].argmax().item<int64_t>();
    out[r][vocab - 1] = out[r][top];
  }
  return out;
}

TEST(StepOutput, TheArgmaxIsTheGreedyDrawInEveryDtype) {
  torch::manual_seed(3);
  for (const auto dtype : {torch::kFloat32, torch::kBFloat16, torch::kFloat16}) {
    const torch::Tensor logits = hard_rows(96).to(dtype);
    const torch::Tensor ids = engine::finite_argmax(logits);
    ASSERT_EQ(ids.scalar_type(), torch::kLong);
    ASSERT_EQ(ids.size(0), logits.size(0));
    for (int64_t r = 0; r < logits.size(0); ++r) {
      EXPECT_EQ(ids[r].item<int64_t>(), sampled(logits[r])) << "row " << r << " in " << dtype;
    }
    EXPECT_EQ(ids[0].item<int64_t>(), 7) << "a tie goes to the lower id";
    EXPECT_EQ(ids[4].item<int64_t>(), -1) << "no finite logit";
  }
}

TEST(StepOutput, WideningOnTheHostKeepsTheValues) {
  torch::manual_seed(5);
  const torch::Tensor logits = hard_rows(64).to(torch::kBFloat16);
  const torch::Tensor host = engine::logits_to_host(logits);
  EXPECT_EQ(host.scalar_type(), torch::kFloat32);
  EXPECT_TRUE(host.is_contiguous());
  EXPECT_TRUE(torch::equal(host.nan_to_num(0, 1e30, -1e30), logits.to(torch::kFloat32).nan_to_num(0, 1e30, -1e30)));
}

TEST(StepOutput, OnlyGreedyRowsWithoutBiasPenaltyOrLogprobsAreDecidedByTheArgmax) {
  engine::SamplingParams p = greedy();
  EXPECT_TRUE(engine::Sampler(p, 10, 0).argmax_decides());
  p.logit_bias = {{2, 1.0}};
  EXPECT_FALSE(engine::Sampler(p, 10, 0).argmax_decides());
  p = greedy();
  p.presence_penalty = 0.5;
  EXPECT_FALSE(engine::Sampler(p, 10, 0).argmax_decides());
  p = greedy();
  p.logprobs = true;
  EXPECT_FALSE(engine::Sampler(p, 10, 0).argmax_decides());
  p = greedy();
  p.temperature = 0.7;
  EXPECT_FALSE(engine::Sampler(p, 10, 0).argmax_decides());

  engine::Sampler taken(greedy(), 10, 0);
  engine::SampleResult out;
  EXPECT_EQ(taken.take_argmax(-1, &out), engine::SampleStatus::kNoFiniteLogit);
  EXPECT_EQ(taken.step(), 0u);
  EXPECT_EQ(taken.take_argmax(4, &out), engine::SampleStatus::kOk);
  EXPECT_EQ(out.token, 4);
  EXPECT_EQ(taken.history(), std::vector<int32_t>{4});
}

class StepOutputBatchTest : public ::testing::TestWithParam<const char*> {};

TEST_P(StepOutputBatchTest, ArgmaxRowsLeaveTheOtherRowsLogitsAsTheyWere) {
  const std::string dir = testutil::scratch_dir(std::string("step_output_") + GetParam());
  engine::make_tiny_model(testutil::tiny_options("llama", dir));
  engine::LoadOptions options;
  options.numeric_mode = GetParam();
  options.threads = 1;
  const auto model = engine::Model::load(dir, options);
  const int64_t vocab = model->config().vocab_size;
  // Three sequences: a prompt, then one decode step each; the middle one wants only its argmax.
  const auto run = [&](bool with_argmax, std::vector<int32_t>* argmax) {
    std::vector<engine::KvCache> caches;
    for (int i = 0; i < 3; ++i) caches.push_back(model->new_cache(32));
    std::vector<engine::BatchInput> inputs(3);
    torch::Tensor logits;
    for (int step = 0; step < 2; ++step) {
      for (int i = 0; i < 3; ++i) {
        inputs[static_cast<size_t>(i)].tokens = step == 0 ? testutil::prompt_tokens(5 + i, vocab, 11 + i)
                                                          : std::vector<int32_t>{3 + i};
        inputs[static_cast<size_t>(i)].kv = &caches[static_cast<size_t>(i)];
        inputs[static_cast<size_t>(i)].argmax_only = with_argmax && i == 1;
      }
      logits = model->forward_batch(inputs, nullptr, with_argmax ? argmax : nullptr);
    }
    return logits;
  };
  const torch::Tensor all = run(false, nullptr);
  std::vector<int32_t> argmax;
  const torch::Tensor rest = run(true, &argmax);
  ASSERT_EQ(all.size(0), 3);
  ASSERT_EQ(rest.size(0), 2);
  ASSERT_EQ(argmax.size(), 1u);
  EXPECT_TRUE(torch::equal(rest[0], all[0]));
  EXPECT_TRUE(torch::equal(rest[1], all[2]));
  EXPECT_EQ(argmax[0], sampled(all[1]));
}

INSTANTIATE_TEST_SUITE_P(Modes, StepOutputBatchTest, ::testing::Values("strict", "fast"));

}  // namespace
}  // namespace reprox
