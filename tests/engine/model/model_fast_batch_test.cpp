// Fast mode's forward_batch: the rows of all inputs run through the
// projections, norms and MLP together, so a row's logits are close to (not
// bitwise) those of the sequence alone. What is promised and checked here:
//   - the same batches run again (fresh Model) give the same bits;
//   - every row is close to the sequence's forward() alone, same argmax;
//   - the caches hold the same positions as after forward() alone;
//   - a batch of one input is bitwise forward().
// Each also with the caches in KV slots (Model::reserve_kv_slots), where the
// steps of decode rows only attend as one group.
#include <gtest/gtest.h>

#include <torch/types.h>

#include "engine/model/model.hpp"
#include "tests/engine/model/logits_compare.hpp"
#include "tests/engine/model/model_test_util.hpp"

namespace reprox {
namespace {
using testutil::bitwise_equal;
using testutil::max_abs_diff;

struct FastArch {
  std::string arch;
  std::string dtype;   // LoadOptions::dtype
  bool slots = false;  // caches in KV slots
};

std::string name_of(const FastArch& a) { return a.arch + "_" + a.dtype + (a.slots ? "_slots" : ""); }
void PrintTo(const FastArch& a, std::ostream* os) { *os << name_of(a); }

std::unique_ptr<engine::Model> load_fast(const std::string& dir, const std::string& dtype = "float32",
                                         bool slots = false) {
  engine::LoadOptions options;
  options.numeric_mode = "fast";
  options.dtype = dtype;
  options.threads = 1;
  auto model = engine::Model::load(dir, options);
  if (slots) model->reserve_kv_slots(8, 32);  // room for every cache of a test
  return model;
}

// Sequence s: `total` tokens; it joins the batch at step s with a prefill of
// its first `prompt` tokens, then decodes one token a step. So most steps mix
// a prefill with decodes of sequences at other positions.
struct Script {
  int64_t prompt, total;
};
const std::vector<Script> kScripts = {{13, 19}, {5, 12}, {20, 22}, {1, 7}, {9, 15}};

// What the scripted batches produced: per step its logits and, per logits
// row, the sequence and the position of that row's token.
struct BatchRun {
  std::vector<torch::Tensor> logits;                          // per step: [rows, V]
  std::vector<std::vector<std::pair<int, int64_t>>> row_of;   // per step: (sequence, position) per row
  std::vector<engine::KvCache> caches;                        // per sequence, after the last step
};

BatchRun run_batched(const engine::Model& model, const std::vector<std::vector<int32_t>>& tokens) {
  BatchRun run;
  for (size_t s = 0; s < tokens.size(); ++s) run.caches.push_back(model.new_cache(4));  // grows on the way
  for (int step = 0;; ++step) {
    std::vector<engine::BatchInput> inputs;
    std::vector<std::pair<int, int64_t>> rows;
    for (int s = 0; s < static_cast<int>(tokens.size()); ++s) {
      const int64_t done = run.caches[s].length, total = static_cast<int64_t>(tokens[s].size());
      if (step < s || done == total) continue;
      const int64_t size = done == 0 ? kScripts[s].prompt : 1;
      engine::BatchInput in;
      in.tokens.assign(tokens[s].begin() + done, tokens[s].begin() + done + size);
      in.kv = &run.caches[s];
      in.want_logits = (step + s) % 4 != 3;  // some rows skip the lm_head
      if (in.want_logits) rows.emplace_back(s, done + size - 1);
      inputs.push_back(std::move(in));
    }
    if (inputs.empty()) break;
    std::string error;
    const torch::Tensor logits = model.forward_batch(inputs, &error);
    EXPECT_TRUE(logits.defined()) << "step " << step << ": " << error;
    if (!logits.defined()) break;
    EXPECT_EQ(logits.size(0), static_cast<int64_t>(rows.size()));
    run.logits.push_back(logits);
    run.row_of.push_back(rows);
  }
  return run;
}

class FastBatchTest : public ::testing::TestWithParam<FastArch> {
 protected:
  void SetUp() override {
    dir_ = testutil::scratch_dir("fast_batch_" + name_of(GetParam()));
    engine::make_tiny_model(testutil::tiny_options(GetParam().arch, dir_));
    model_ = load_fast(dir_, GetParam().dtype, GetParam().slots);
    for (size_t s = 0; s < kScripts.size(); ++s) {
      tokens_.push_back(testutil::prompt_tokens(kScripts[s].total, model_->config().vocab_size, 500 + s));
    }
  }

  std::string dir_;
  std::unique_ptr<engine::Model> model_;
  std::vector<std::vector<int32_t>> tokens_;
};

TEST_P(FastBatchTest, SameBatchesGiveTheSameBitsRunToRun) {
  const BatchRun first = run_batched(*model_, tokens_);
  const BatchRun second = run_batched(*load_fast(dir_, GetParam().dtype, GetParam().slots), tokens_);
  ASSERT_EQ(first.logits.size(), second.logits.size());
  EXPECT_GT(first.logits.size(), 5u);
  for (size_t step = 0; step < first.logits.size(); ++step) {
    EXPECT_TRUE(bitwise_equal(first.logits[step], second.logits[step]))
        << "step " << step << " differs by " << max_abs_diff(first.logits[step], second.logits[step]);
  }
}

TEST_P(FastBatchTest, RowsAreCloseToTheSequenceAloneWithTheSameArgmax) {
  if (GetParam().dtype != "float32") GTEST_SKIP() << "16-bit rounding differs too much for a tight bound";
  std::vector<torch::Tensor> alone;  // per sequence: [total, V]
  for (const auto& t : tokens_) {
    engine::KvCache kv = model_->new_cache();
    alone.push_back(model_->forward(t, kv, /*all_logits=*/true));
    ASSERT_TRUE(alone.back().defined());
  }
  const BatchRun run = run_batched(*model_, tokens_);
  int checked = 0;
  for (size_t step = 0; step < run.logits.size(); ++step) {
    for (size_t row = 0; row < run.row_of[step].size(); ++row) {
      const auto [s, pos] = run.row_of[step][row];
      const torch::Tensor got = run.logits[step][static_cast<int64_t>(row)];
      const torch::Tensor want = alone[s][pos];
      EXPECT_LT(max_abs_diff(got, want), 1e-4) << "step " << step << " sequence " << s << " position " << pos;
      EXPECT_EQ(got.argmax().item<int64_t>(), want.argmax().item<int64_t>())
          << "step " << step << " sequence " << s << " position " << pos;
      ++checked;
    }
  }
  EXPECT_GT(checked, 20);
}

TEST_P(FastBatchTest, CachesHoldTheSamePositionsAsAlone) {
  const BatchRun run = run_batched(*model_, tokens_);
  const double tolerance = GetParam().dtype == "float32" ? 1e-5 : 0.1;
  for (size_t s = 0; s < tokens_.size(); ++s) {
    engine::KvCache kv = model_->new_cache(4);
    ASSERT_TRUE(model_->forward(tokens_[s], kv).defined());
    const engine::KvCache& batched = run.caches[s];
    ASSERT_EQ(batched.length, kv.length) << "sequence " << s;
    ASSERT_EQ(batched.length, static_cast<int64_t>(tokens_[s].size()));
    for (size_t layer = 0; layer < kv.k.size(); ++layer) {
      for (const auto& [got, want] : {std::pair(batched.k[layer], kv.k[layer]), std::pair(batched.v[layer], kv.v[layer])}) {
        // [Nkv, capacity, D]: the filled positions agree, the rest was never written.
        const torch::Tensor filled = got.narrow(1, 0, kv.length).to(torch::kFloat32);
        EXPECT_LT(max_abs_diff(filled, want.narrow(1, 0, kv.length).to(torch::kFloat32)), tolerance)
            << "sequence " << s << " layer " << layer;
        const int64_t rest = got.size(1) - kv.length;
        EXPECT_EQ(got.narrow(1, kv.length, rest).abs().sum().item<double>(), 0.0)
            << "sequence " << s << " layer " << layer;
      }
    }
  }
}

TEST_P(FastBatchTest, ABatchOfOneIsBitwiseForward) {
  engine::KvCache a = model_->new_cache(), b = model_->new_cache();
  for (const int64_t size : {int64_t{11}, int64_t{1}, int64_t{1}}) {
    const std::vector<int32_t> chunk(tokens_[0].begin() + a.length, tokens_[0].begin() + a.length + size);
    const torch::Tensor alone = model_->forward(chunk, a);
    std::vector<engine::BatchInput> inputs(1);
    inputs[0].tokens = chunk;
    inputs[0].kv = &b;
    const torch::Tensor batched = model_->forward_batch(inputs);
    ASSERT_TRUE(batched.defined());
    EXPECT_TRUE(bitwise_equal(batched[0], alone)) << "at " << b.length;
    EXPECT_EQ(a.length, b.length);
  }
}

INSTANTIATE_TEST_SUITE_P(FastMode, FastBatchTest,
                         ::testing::Values(FastArch{"qwen3", "float32"}, FastArch{"llama", "float32"},
                                           FastArch{"gpt2", "float32"}, FastArch{"qwen3", "bfloat16"},
                                           FastArch{"gpt2", "bfloat16"}, FastArch{"qwen3", "float32", true},
                                           FastArch{"llama", "float32", true}, FastArch{"gpt2", "float32", true},
                                           FastArch{"qwen3", "bfloat16", true}),
                         [](const ::testing::TestParamInfo<FastArch>& info) { return name_of(info.param); });

}  // namespace
}  // namespace reprox
