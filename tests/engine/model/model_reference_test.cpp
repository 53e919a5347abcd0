// Logits of the model against the independent double-precision reference,
// and KV-cached decoding against a full recompute, per architecture and
// numeric mode: bitwise equal in strict mode, within 1e-5 in fast mode.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <tuple>

#include <torch/types.h>

#include "tests/engine/model/logits_compare.hpp"
#include "engine/model/model.hpp"
#include "tests/engine/model/model_test_util.hpp"
#include "tests/engine/model/reference_model.hpp"

namespace reprox {
namespace {

struct Case {
  std::string name;
  std::string arch;
  std::string dtype = "f32";
  int tie = -1;  // -1: the arch's default
  bool llama3_scaling = false;
  bool gpt2_prefix = false;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

using testutil::bitwise_equal;
using testutil::max_abs_diff;

class ModelReferenceTest : public ::testing::TestWithParam<std::tuple<Case, std::string>> {};

TEST_P(ModelReferenceTest, LogitsMatchReferenceAndCachedDecodingMatchesRecompute) {
  const Case& c = std::get<0>(GetParam());
  const std::string& mode = std::get<1>(GetParam());
  const bool strict = mode == "strict";
  const std::string dir = testutil::scratch_dir(c.name + "_" + mode);
  engine::TinyModelOptions o = testutil::tiny_options(c.arch, dir);
  o.dtype = c.dtype;
  if (c.tie >= 0) o.tie_embeddings = c.tie == 1;
  o.llama3_rope_scaling = c.llama3_scaling;
  o.gpt2_transformer_prefix = c.gpt2_prefix;
  o.seed = 1234;
  engine::make_tiny_model(o);

  engine::LoadOptions options;
  options.numeric_mode = mode;
  const auto model = engine::Model::load(dir, options);
  ASSERT_EQ(model->strict(), strict);
  const engine::ModelConfig& cfg = model->config();
  if (c.tie == 1) {
    EXPECT_TRUE(cfg.tie_embeddings);
  }
  if (c.llama3_scaling) {
    EXPECT_EQ(cfg.rope_scaling.type, "llama3");
  }
  const std::vector<int32_t> prompt = testutil::prompt_tokens(20, cfg.vocab_size);

  // Full forward vs the reference, all positions.
  engine::KvCache full_cache = model->new_cache();
  const torch::Tensor all = model->forward(prompt, full_cache, /*all_logits=*/true);
  ASSERT_TRUE(all.defined());
  ASSERT_EQ(all.size(0), 20);
  ASSERT_EQ(all.size(1), cfg.vocab_size);
  const testref::ReferenceModel reference(dir);
  const std::vector<std::vector<double>> expected = reference.logits(prompt);
  const auto got = all.accessor<float, 2>();
  double max_diff = 0, max_abs = 0;
  for (int64_t t = 0; t < 20; ++t) {
    for (int64_t v = 0; v < cfg.vocab_size; ++v) {
      max_diff = std::max(max_diff, std::abs(got[t][v] - expected[t][v]));
      max_abs = std::max(max_abs, std::abs(expected[t][v]));
    }
  }
  EXPECT_LT(max_diff, 1e-4) << "max |logit| " << max_abs;
  std::cout << c.name << " (" << mode << "): max |logit| " << max_abs << ", max diff vs reference " << max_diff
            << "\n";
  EXPECT_GT(max_abs, 0.5) << "logits too small for the comparison to mean anything";

  // Prefill 12 tokens, then decode one at a time; compare to the full rows.
  engine::KvCache kv = model->new_cache(4);  // small: exercises cache growth
  std::vector<int32_t> prefix(prompt.begin(), prompt.begin() + 12);
  torch::Tensor step = model->forward(prefix, kv);
  ASSERT_TRUE(step.defined());
  EXPECT_EQ(kv.length, 12);
  if (strict) {
    EXPECT_TRUE(bitwise_equal(step, all[11])) << "max diff " << max_abs_diff(step, all[11]);
  } else {
    EXPECT_LT(max_abs_diff(step, all[11]), 1e-5);
  }
  double max_step_diff = 0;
  for (int64_t t = 12; t < 20; ++t) {
    step = model->forward({prompt[t]}, kv);
    ASSERT_TRUE(step.defined());
    const double diff = max_abs_diff(step, all[t]);
    max_step_diff = std::max(max_step_diff, diff);
    if (strict) {
      EXPECT_TRUE(bitwise_equal(step, all[t])) << "position " << t << ", max diff " << diff;
    } else {
      EXPECT_LT(diff, 1e-5) << "position " << t;
    }
  }
  EXPECT_EQ(kv.length, 20);
  std::cout << c.name << " (" << mode << "): max diff cached vs recompute " << max_step_diff << "\n";
}

INSTANTIATE_TEST_SUITE_P(
    Architectures, ModelReferenceTest,
    ::testing::Combine(::testing::Values(Case{"qwen3_default", "qwen3"},
                                         Case{"qwen3_bf16_untied", "qwen3", "bf16", 0},
                                         Case{"llama_llama3_rope", "llama", "f32", -1, true},
                                         Case{"llama_bf16_tied", "llama", "bf16", 1},
                                         Case{"mistral_f16", "mistral", "f16"},
                                         Case{"qwen2_bias", "qwen2"},
                                         Case{"gpt2_tied", "gpt2"},
                                         Case{"gpt2_untied_prefixed_f16", "gpt2", "f16", 0, false, true}),
                       ::testing::Values(std::string("strict"), std::string("fast"))),
    [](const ::testing::TestParamInfo<std::tuple<Case, std::string>>& info) {
      return std::get<0>(info.param).name + "_" + std::get<1>(info.param);
    });

TEST(ModelForward, RejectsInvalidInputWithoutTouchingTheCache) {
  const std::string dir = testutil::scratch_dir("invalid_input");
  engine::make_tiny_model(testutil::tiny_options("qwen3", dir));
  const auto model = engine::Model::load(dir);
  engine::KvCache kv = model->new_cache();
  std::string error;
  EXPECT_FALSE(model->forward({}, kv, false, &error).defined());
  EXPECT_FALSE(model->forward({static_cast<int32_t>(model->config().vocab_size)}, kv, false, &error).defined());
  EXPECT_NE(error.find("outside the vocabulary"), std::string::npos);
  std::vector<int32_t> too_long(static_cast<size_t>(model->config().max_positions) + 1, 1);
  EXPECT_FALSE(model->forward(too_long, kv, false, &error).defined());
  EXPECT_NE(error.find("max_positions"), std::string::npos);
  EXPECT_EQ(kv.length, 0);
}

}  // namespace
}  // namespace reprox
