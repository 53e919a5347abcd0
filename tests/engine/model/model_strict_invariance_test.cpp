// Strict mode's promise, per architecture: a token's logits are the same
// bits however the sequence reached it. Compared with memcmp:
//   - one prefill of L tokens vs a prefill of L-k then k single-token steps;
//   - one prefill vs the same prompt in chunks of random sizes, from caches
//     of random (growing) capacity;
//   - 1 vs 3 kernel threads;
//   - a sequence alone vs inside forward_batch with other sequences at
//     random positions, doing random prefill chunks and decodes.
// Each for fp32 weights and for 16-bit and q8 weight storage.
// Also the mode's load-time errors and fingerprint ids.
#include <gtest/gtest.h>

#include <random>

#include <ATen/Parallel.h>
#include <torch/types.h>

#include "engine/kernels/kernels.hpp"
#include "tests/engine/model/logits_compare.hpp"
#include "engine/model/libtorch_cpu_class.hpp"
#include "engine/model/model.hpp"
#include "tests/engine/model/load_error.hpp"
#include "tests/engine/model/model_test_util.hpp"

namespace reprox {
namespace {
using testutil::load_error;
using testutil::bitwise_equal;
using testutil::max_abs_diff;

constexpr int64_t kPromptLength = 40;

struct Arch {
  std::string name;
  std::string arch;
  bool llama3_scaling = false;
  std::string dtype = "f32";     // the checkpoint's dtype
  std::string weights = "auto";  // LoadOptions::weights
};

void PrintTo(const Arch& a, std::ostream* os) { *os << a.name; }

std::string make_model(const Arch& a) {
  const std::string dir = testutil::scratch_dir("strict_" + a.name);
  engine::TinyModelOptions o = testutil::tiny_options(a.arch, dir);
  o.llama3_rope_scaling = a.llama3_scaling;
  o.dtype = a.dtype;
  o.seed = 99;
  engine::make_tiny_model(o);
  return dir;
}

std::unique_ptr<engine::Model> load(const std::string& dir, const std::string& mode, int threads = 1,
                                    const std::string& weights = "auto") {
  engine::LoadOptions options;
  options.numeric_mode = mode;
  options.threads = threads;
  options.weights = weights;
  return engine::Model::load(dir, options);
}

class StrictInvarianceTest : public ::testing::TestWithParam<Arch> {
 protected:
  void SetUp() override {
    dir_ = make_model(GetParam());
    model_ = load(dir_, "strict", 1, GetParam().weights);
    prompt_ = testutil::prompt_tokens(kPromptLength, model_->config().vocab_size, 31);
    engine::KvCache kv = model_->new_cache(kPromptLength);
    full_ = model_->forward(prompt_, kv, /*all_logits=*/true);
    ASSERT_TRUE(full_.defined());
    ASSERT_EQ(full_.size(0), kPromptLength);
  }
  void TearDown() override { kernels::set_num_threads(1); }

  std::string dir_;
  std::unique_ptr<engine::Model> model_;
  std::vector<int32_t> prompt_;
  torch::Tensor full_;  // [L, vocab]: one prefill of the whole prompt
};

TEST_P(StrictInvarianceTest, CachedDecodingIsBitwiseEqualToFullRecompute) {
  for (int64_t k : {int64_t{1}, int64_t{3}, int64_t{9}, kPromptLength - 1}) {
    engine::KvCache kv = model_->new_cache(2);  // small: the cache grows on the way
    const std::vector<int32_t> head(prompt_.begin(), prompt_.end() - k);
    torch::Tensor logits = model_->forward(head, kv);
    ASSERT_TRUE(logits.defined());
    const int64_t last = kPromptLength - k - 1;
    EXPECT_TRUE(bitwise_equal(logits, full_[last])) << "k=" << k << " prefill row " << last << " differs by "
                                                   << max_abs_diff(logits, full_[last]);
    for (int64_t t = kPromptLength - k; t < kPromptLength; ++t) {
      logits = model_->forward({prompt_[t]}, kv);
      ASSERT_TRUE(logits.defined());
      EXPECT_TRUE(bitwise_equal(logits, full_[t]))
          << "k=" << k << " decode position " << t << " differs by " << max_abs_diff(logits, full_[t]);
    }
  }
}

TEST_P(StrictInvarianceTest, ChunkedPrefillIsBitwiseEqualAtEveryPosition) {
  std::mt19937 rng(2024);
  for (int trial = 0; trial < 6; ++trial) {
    engine::KvCache kv = model_->new_cache(std::uniform_int_distribution<int64_t>(1, 64)(rng));
    std::vector<int64_t> chunks;
    for (int64_t pos = 0; pos < kPromptLength;) {
      const int64_t size = std::min(std::uniform_int_distribution<int64_t>(1, 13)(rng), kPromptLength - pos);
      const std::vector<int32_t> chunk(prompt_.begin() + pos, prompt_.begin() + pos + size);
      const torch::Tensor logits = model_->forward(chunk, kv, /*all_logits=*/true);
      ASSERT_TRUE(logits.defined());
      ASSERT_EQ(logits.size(0), size);
      for (int64_t i = 0; i < size; ++i) {
        EXPECT_TRUE(bitwise_equal(logits[i], full_[pos + i]))
            << "trial " << trial << " chunk [" << pos << ", " << pos + size << ") position " << pos + i
            << " differs by " << max_abs_diff(logits[i], full_[pos + i]);
      }
      chunks.push_back(size);
      pos += size;
    }
    EXPECT_EQ(kv.length, kPromptLength);
    EXPECT_GT(chunks.size(), 3u);
  }
}

TEST_P(StrictInvarianceTest, KernelThreadCountDoesNotChangeABit) {
  const auto threaded = load(dir_, "strict", /*threads=*/3, GetParam().weights);
  EXPECT_EQ(kernels::num_threads(), 3);
  engine::KvCache kv = threaded->new_cache();
  const torch::Tensor logits = threaded->forward(prompt_, kv, /*all_logits=*/true);
  ASSERT_TRUE(logits.defined());
  EXPECT_TRUE(bitwise_equal(logits, full_)) << "differs by " << max_abs_diff(logits, full_);
}

TEST_P(StrictInvarianceTest, StrictAndFastAgreeClosely) {
  if (GetParam().weights == "q8") GTEST_SKIP() << "q8 weights differ from the fast mode's fp32 ones";
  const auto fast = load(dir_, "fast");
  engine::KvCache kv = fast->new_cache();
  const torch::Tensor logits = fast->forward(prompt_, kv, /*all_logits=*/true);
  ASSERT_TRUE(logits.defined());
  EXPECT_LT(max_abs_diff(logits, full_), 1e-4);
}

TEST_P(StrictInvarianceTest, BatchedRowsAreBitwiseEqualToTheSequenceAlone) {
  // Up to 16 sequences (prompt_ plus others with their own tokens) advance in
  // random chunks; each step runs all unfinished ones in one forward_batch.
  // Every logits row must equal full_ (prompt_) or that sequence's own
  // single-sequence prefill.
  std::mt19937 rng(77);
  for (int trial = 0; trial < 4; ++trial) {
    const int count = std::uniform_int_distribution<int>(2, 16)(rng);
    std::vector<std::vector<int32_t>> tokens(count);
    std::vector<torch::Tensor> alone(count);
    tokens[0] = prompt_;
    alone[0] = full_;
    for (int s = 1; s < count; ++s) {
      const int64_t length = std::uniform_int_distribution<int64_t>(1, 48)(rng);
      tokens[s] = testutil::prompt_tokens(length, model_->config().vocab_size, 1000 * trial + s);
      engine::KvCache kv = model_->new_cache(length);
      alone[s] = model_->forward(tokens[s], kv, /*all_logits=*/true);
      ASSERT_TRUE(alone[s].defined());
    }
    std::vector<engine::KvCache> caches;
    for (int s = 0; s < count; ++s) caches.push_back(model_->new_cache(std::uniform_int_distribution<int64_t>(1, 32)(rng)));
    int steps = 0;
    for (;;) {
      std::vector<engine::BatchInput> inputs;
      std::vector<int> owner;
      for (int s = 0; s < count; ++s) {
        const int64_t done = caches[s].length, left = static_cast<int64_t>(tokens[s].size()) - done;
        if (left == 0 || std::uniform_int_distribution<int>(0, 3)(rng) == 0) continue;  // sometimes sits out
        const int64_t size = std::min<int64_t>(left, std::uniform_int_distribution<int64_t>(1, 9)(rng));
        engine::BatchInput in;
        in.tokens.assign(tokens[s].begin() + done, tokens[s].begin() + done + size);
        in.kv = &caches[s];
        in.want_logits = std::uniform_int_distribution<int>(0, 4)(rng) != 0;
        inputs.push_back(std::move(in));
        owner.push_back(s);
      }
      bool all_done = true;
      for (int s = 0; s < count; ++s) all_done = all_done && caches[s].length == static_cast<int64_t>(tokens[s].size());
      if (all_done) break;
      if (inputs.empty()) continue;
      std::vector<int64_t> last(inputs.size());
      for (size_t i = 0; i < inputs.size(); ++i) last[i] = caches[owner[i]].length + static_cast<int64_t>(inputs[i].tokens.size()) - 1;
      std::string error;
      const torch::Tensor logits = model_->forward_batch(inputs, &error);
      ASSERT_TRUE(logits.defined()) << error;
      int64_t row = 0;
      for (size_t i = 0; i < inputs.size(); ++i) {
        if (!inputs[i].want_logits) continue;
        const int s = owner[i];
        EXPECT_TRUE(bitwise_equal(logits[row], alone[s][last[i]]))
            << "trial " << trial << " sequence " << s << " position " << last[i] << " in a batch of "
            << inputs.size() << " differs by " << max_abs_diff(logits[row], alone[s][last[i]]);
        ++row;
      }
      EXPECT_EQ(row, logits.size(0));
      ++steps;
    }
    EXPECT_GT(steps, 3);
  }
}

TEST_P(StrictInvarianceTest, BatchRejectsABadInputWithoutAdvancingAnyCache) {
  engine::KvCache a = model_->new_cache(8), b = model_->new_cache(8);
  std::vector<engine::BatchInput> inputs(2);
  inputs[0].tokens = {1, 2, 3};
  inputs[0].kv = &a;
  inputs[1].tokens = {static_cast<int32_t>(model_->config().vocab_size)};
  inputs[1].kv = &b;
  std::string error;
  EXPECT_FALSE(model_->forward_batch(inputs, &error).defined());
  EXPECT_NE(error.find("batch input 1: token id"), std::string::npos) << error;
  EXPECT_EQ(a.length, 0);
  EXPECT_EQ(b.length, 0);
}

// Fast mode computes a batch's rows together, so they are close to, not
// bitwise, the sequences alone (more in model_fast_batch_test.cpp).
TEST(FastMode, BatchOfTwoPrefillsIsCloseToForward) {
  const std::string dir = testutil::scratch_dir("fast_batch");
  engine::make_tiny_model(testutil::tiny_options("qwen3", dir));
  const auto fast = load(dir, "fast");
  const auto p1 = testutil::prompt_tokens(12, fast->config().vocab_size, 5);
  const auto p2 = testutil::prompt_tokens(7, fast->config().vocab_size, 6);
  engine::KvCache a1 = fast->new_cache(), a2 = fast->new_cache(), b1 = fast->new_cache(), b2 = fast->new_cache();
  const torch::Tensor l1 = fast->forward(p1, a1), l2 = fast->forward(p2, a2);
  std::vector<engine::BatchInput> inputs(2);
  inputs[0].tokens = p1;
  inputs[0].kv = &b1;
  inputs[1].tokens = p2;
  inputs[1].kv = &b2;
  const torch::Tensor both = fast->forward_batch(inputs);
  ASSERT_TRUE(both.defined());
  EXPECT_LT(max_abs_diff(both[0], l1), 1e-4);
  EXPECT_LT(max_abs_diff(both[1], l2), 1e-4);
  EXPECT_EQ(both[0].argmax().item<int64_t>(), l1.argmax().item<int64_t>());
  EXPECT_EQ(both[1].argmax().item<int64_t>(), l2.argmax().item<int64_t>());
  EXPECT_EQ(b1.length, 12);
  EXPECT_EQ(b2.length, 7);
}

INSTANTIATE_TEST_SUITE_P(Architectures, StrictInvarianceTest,
                         ::testing::Values(Arch{"qwen3", "qwen3"}, Arch{"llama", "llama"},
                                           Arch{"llama3_rope", "llama", true}, Arch{"mistral", "mistral"},
                                           Arch{"qwen2", "qwen2"}, Arch{"gpt2", "gpt2"},
                                           Arch{"qwen3_bf16", "qwen3", false, "bf16"},
                                           Arch{"llama_f16", "llama", false, "f16"},
                                           Arch{"gpt2_bf16", "gpt2", false, "bf16"},
                                           Arch{"qwen3_q8", "qwen3", false, "f32", "q8"},
                                           Arch{"llama_bf16_q8", "llama", false, "bf16", "q8"},
                                           Arch{"gpt2_q8", "gpt2", false, "f32", "q8"}),
                         [](const ::testing::TestParamInfo<Arch>& info) { return info.param.name; });

TEST(NumericMode, StrictIsTheDefaultAndModesFingerprintDifferently) {
  const std::string dir = make_model(Arch{"modes", "qwen3"});
  const auto strict = engine::Model::load(dir);
  EXPECT_TRUE(strict->strict());
  EXPECT_STREQ(strict->numeric_mode(), "strict");
  EXPECT_EQ(strict->numeric_mode_id(), kernels::numeric_mode_id());
  const auto fast = load(dir, "fast");
  EXPECT_FALSE(fast->strict());
  EXPECT_EQ(fast->numeric_mode_id(), "fast-libtorch-fused+cpu-" + engine::libtorch_cpu_class());
}

// Fast mode's bits on the CPU depend on which libtorch kernels the host runs,
// so its id names the class; a ceiling set in the environment shows too.
TEST(NumericMode, FastModeOnTheCpuNamesTheLibtorchCpuClass) {
  const std::string cls = engine::libtorch_cpu_class();
  EXPECT_TRUE(cls.rfind("default", 0) == 0 || cls.rfind("avx2", 0) == 0 || cls.rfind("avx512", 0) == 0) << cls;
  ::setenv("ATEN_CPU_CAPABILITY", "default", 1);
  const std::string capped = engine::libtorch_cpu_class();
  ::unsetenv("ATEN_CPU_CAPABILITY");
  EXPECT_EQ(capped, cls + "+aten=default");
  EXPECT_EQ(engine::libtorch_cpu_class(), cls);
}

TEST(NumericMode, RefusesUnknownModesAndStrictOutsideFp32) {
  const std::string dir = make_model(Arch{"mode_errors", "qwen3"});
  engine::LoadOptions options;
  options.numeric_mode = "fastest";
  EXPECT_NE(load_error(dir, options).find("unsupported numeric_mode 'fastest'"), std::string::npos);
  options.numeric_mode = "strict";
  options.dtype = "bfloat16";
  const std::string error = load_error(dir, options);
  EXPECT_NE(error.find("numeric_mode 'strict' computes in float32 only"), std::string::npos) << error;
  options.numeric_mode = "fast";
  EXPECT_EQ(load_error(dir, options), "(no error)");
}

// Strict mode runs torch on one thread whatever `threads` says (torch's
// OpenMP workers would spin and take cores from the kernel pool); fast mode
// gives torch the threads it is asked for.
TEST(NumericMode, StrictKeepsTorchOnOneThreadFastUsesTheThreadsAsked) {
  const std::string dir = make_model(Arch{"torch_threads", "qwen3"});
  const int before = at::get_num_threads();
  engine::LoadOptions options;
  options.threads = 2;
  options.numeric_mode = "fast";
  engine::Model::load(dir, options);
  EXPECT_EQ(at::get_num_threads(), 2);
  options.numeric_mode = "strict";
  engine::Model::load(dir, options);
  EXPECT_EQ(at::get_num_threads(), 1);
  at::set_num_threads(before);
}

TEST(NumericMode, StrictRejectsANonContiguousCacheWithoutTouchingIt) {
  const std::string dir = make_model(Arch{"bad_cache", "qwen3"});
  const auto model = engine::Model::load(dir);
  engine::KvCache kv = model->new_cache(8);
  kv.k[0] = kv.k[0].transpose(1, 2);  // [Nkv, D, cap]: not the layout the kernels read
  std::string error;
  EXPECT_FALSE(model->forward({1, 2, 3}, kv, false, &error).defined());
  EXPECT_NE(error.find("not a contiguous float32 CPU tensor"), std::string::npos) << error;
  EXPECT_EQ(kv.length, 0);
}

}  // namespace
}  // namespace reprox
