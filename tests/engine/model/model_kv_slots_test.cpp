// Fast mode's KV slots (Model::reserve_kv_slots, kv_arena.hpp): a cache is
// a slot while one is free and its capacity fits; a dropped cache returns
// its slot zeroed; a cache that outgrows its slot moves to tensors of its
// own and keeps its values; steps of decode rows in slots attend as one
// group, close to each sequence alone.
#include <gtest/gtest.h>

#include <ATen/record_function.h>
#include <torch/types.h>

#include "engine/model/kv_arena.hpp"
#include "engine/model/model.hpp"
#include "tests/engine/model/logits_compare.hpp"
#include "tests/engine/model/model_test_util.hpp"

namespace reprox {
namespace {
using testutil::max_abs_diff;

class KvSlotsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testutil::scratch_dir("kv_slots");
    engine::make_tiny_model(testutil::tiny_options("llama", dir_));
  }
  std::unique_ptr<engine::Model> load(int64_t slots, int64_t tokens) const {
    engine::LoadOptions options;
    options.numeric_mode = "fast";
    options.threads = 1;
    auto model = engine::Model::load(dir_, options);
    if (slots > 0) model->reserve_kv_slots(slots, tokens);
    return model;
  }
  std::string dir_;
};

double abs_sum(const engine::KvCache& kv) {
  double sum = 0;
  for (size_t l = 0; l < kv.k.size(); ++l) sum += kv.k[l].abs().sum().item<double>() + kv.v[l].abs().sum().item<double>();
  return sum;
}

TEST_F(KvSlotsTest, SlotsAreTakenWhileFreeAndComeBackZeroed) {
  const auto model = load(2, 32);
  const std::vector<int32_t> tokens = testutil::prompt_tokens(12, model->config().vocab_size);
  EXPECT_EQ(model->free_kv_slots(), 2u);
  EXPECT_FALSE(model->new_cache(64).slot) << "a capacity past the slots' never takes one";
  auto a = std::make_unique<engine::KvCache>(model->new_cache(8));
  engine::KvCache b = model->new_cache(8);
  engine::KvCache own = model->new_cache(8);  // no slot left
  ASSERT_TRUE(a->slot && b.slot);
  EXPECT_FALSE(own.slot);
  EXPECT_EQ(a->capacity(), 32);
  EXPECT_EQ(own.capacity(), 8);
  EXPECT_EQ(model->free_kv_slots(), 0u);

  ASSERT_TRUE(model->forward(tokens, *a).defined());
  EXPECT_GT(abs_sum(*a), 0.0);
  a.reset();
  EXPECT_EQ(model->free_kv_slots(), 1u);
  const engine::KvCache again = model->new_cache(8);
  ASSERT_TRUE(again.slot);
  EXPECT_EQ(abs_sum(again), 0.0) << "the slot came back with the old sequence's keys";
}

TEST_F(KvSlotsTest, ACacheThatOutgrowsItsSlotKeepsItsValues) {
  const auto with_slots = load(1, 16);
  const auto without = load(0, 0);
  const std::vector<int32_t> tokens = testutil::prompt_tokens(24, with_slots->config().vocab_size);
  engine::KvCache slotted = with_slots->new_cache(8), plain = without->new_cache(8);
  ASSERT_TRUE(slotted.slot);
  for (const auto& [from, size] : {std::pair<int64_t, int64_t>{0, 12}, {12, 1}, {13, 1}, {14, 10}}) {
    const std::vector<int32_t> chunk(tokens.begin() + from, tokens.begin() + from + size);
    const torch::Tensor got = with_slots->forward(chunk, slotted), want = without->forward(chunk, plain);
    ASSERT_TRUE(got.defined() && want.defined());
    EXPECT_LT(max_abs_diff(got, want), 1e-5) << "at " << from;
    EXPECT_EQ(got.argmax().item<int64_t>(), want.argmax().item<int64_t>()) << "at " << from;
  }
  EXPECT_FALSE(slotted.slot) << "24 positions do not fit a slot of 16";
  EXPECT_GE(slotted.capacity(), 24);
  EXPECT_EQ(with_slots->free_kv_slots(), 1u);
}

// Choices that fork from one prompt copy its cache: into a slot of their
// own while one is free, else into tensors sized to the request, never the
// whole slot; either copy goes on exactly as the original does, and the
// copy's slot comes back zeroed.
TEST_F(KvSlotsTest, ACopiedCacheTakesASlotOfItsOwnAndOnlyTheFilledPositions) {
  const auto model = load(2, 32);
  const std::vector<int32_t> tokens = testutil::prompt_tokens(13, model->config().vocab_size);
  const std::vector<int32_t> prompt(tokens.begin(), tokens.end() - 1), next(tokens.end() - 1, tokens.end());
  engine::KvCache original = model->new_cache(8);
  ASSERT_TRUE(original.slot);
  ASSERT_TRUE(model->forward(prompt, original).defined());

  auto in_slot = std::make_unique<engine::KvCache>(model->copy_cache(original, 16));
  engine::KvCache own = model->copy_cache(original, 16);  // both slots taken now
  ASSERT_TRUE(in_slot->slot);
  EXPECT_NE(in_slot->slot->index, original.slot->index);
  EXPECT_FALSE(own.slot);
  EXPECT_EQ(own.capacity(), 16) << "sized to the request, not to a slot";
  EXPECT_EQ(in_slot->length, 12);
  EXPECT_EQ(own.length, 12);
  EXPECT_EQ(model->copy_cache(original, 4).capacity(), 12) << "never less than the filled positions";

  const torch::Tensor from_original = model->forward(next, original);
  const torch::Tensor from_slot = model->forward(next, *in_slot), from_own = model->forward(next, own);
  EXPECT_TRUE(torch::equal(from_slot, from_original));
  EXPECT_TRUE(torch::equal(from_own, from_original));
  EXPECT_EQ(original.length, 13);

  in_slot.reset();
  const engine::KvCache again = model->new_cache(8);
  ASSERT_TRUE(again.slot);
  EXPECT_EQ(abs_sum(again), 0.0) << "the copy's slot came back with its keys";
}

// Steps of decode rows only, all in slots (`sequences` of them, grouped, or
// at a fixed shape with static_decode): every row close to its sequence
// alone, the same bits when the same steps run again, and the caches hold
// the same values as alone.
void check_decode_steps(const engine::Model& model, int sequences) {
  const int64_t vocab = model.config().vocab_size;
  std::vector<std::vector<int32_t>> tokens;
  for (int s = 0; s < sequences; ++s) tokens.push_back(testutil::prompt_tokens(10 + 3 * s + 6, vocab, 40 + s));
  const auto run = [&](std::vector<engine::KvCache>& caches) {
    std::vector<torch::Tensor> steps;
    for (int s = 0; s < sequences; ++s) {
      caches.push_back(model.new_cache(8));
      const std::vector<int32_t> prompt(tokens[s].begin(), tokens[s].end() - 6);
      EXPECT_TRUE(model.forward(prompt, caches.back()).defined());
    }
    for (int step = 0; step < 6; ++step) {
      std::vector<engine::BatchInput> inputs(static_cast<size_t>(sequences));
      for (int s = 0; s < sequences; ++s) {
        inputs[s].tokens = {tokens[s][static_cast<size_t>(caches[s].length)]};
        inputs[s].kv = &caches[s];
      }
      steps.push_back(model.forward_batch(inputs));
    }
    return steps;
  };
  std::vector<engine::KvCache> first_caches, second_caches;
  const std::vector<torch::Tensor> first = run(first_caches);
  const std::vector<torch::Tensor> second = run(second_caches);
  for (size_t step = 0; step < first.size(); ++step) {
    EXPECT_TRUE(testutil::bitwise_equal(first[step], second[step])) << "step " << step;
  }
  for (int s = 0; s < sequences; ++s) {
    engine::KvCache alone = model.new_cache(64);
    ASSERT_FALSE(alone.slot);
    const torch::Tensor logits = model.forward(tokens[s], alone, /*all_logits=*/true);
    for (size_t step = 0; step < first.size(); ++step) {
      const torch::Tensor want = logits[static_cast<int64_t>(tokens[s].size() - 6 + step)];
      EXPECT_LT(max_abs_diff(first[step][s], want), 1e-4) << "sequence " << s << " step " << step;
      EXPECT_EQ(first[step][s].argmax().item<int64_t>(), want.argmax().item<int64_t>());
    }
    for (size_t l = 0; l < alone.k.size(); ++l) {
      EXPECT_LT(max_abs_diff(first_caches[s].k[l].narrow(1, 0, alone.length), alone.k[l].narrow(1, 0, alone.length)),
                1e-5);
      EXPECT_LT(max_abs_diff(first_caches[s].v[l].narrow(1, 0, alone.length), alone.v[l].narrow(1, 0, alone.length)),
                1e-5);
    }
  }
}

TEST_F(KvSlotsTest, GroupedDecodeStepsAreCloseToAloneAndRepeatable) {
  check_decode_steps(*load(6, 32), 3);  // both runs' caches in slots
}

// The fixed-shape step (the one a CUDA device records as a graph), run
// eagerly: 3 rows padded to 4 with a row in the scratch slot, keys gathered
// to 32 positions; and a single row.
TEST_F(KvSlotsTest, FixedShapeDecodeStepsAreCloseToAloneAndRepeatable) {
  for (const int sequences : {3, 1}) {
    SCOPED_TRACE(sequences);
    const auto model = load(6, 32);
    model->set_static_decode(true);
    check_decode_steps(*model, sequences);
  }
}

// Top-level ATen calls of one forward_batch (as reprox_bench_step_ops counts).
thread_local int64_t depth = 0, calls = 0;
int64_t count_calls(const engine::Model& model, std::vector<engine::BatchInput>& inputs, torch::Tensor* logits) {
  calls = 0;
  auto handle = at::addThreadLocalCallback(at::RecordFunctionCallback(
      [](const at::RecordFunction&) -> std::unique_ptr<at::ObserverContext> {
        if (depth++ == 0) ++calls;
        return nullptr;
      },
      [](const at::RecordFunction&, at::ObserverContext*) { --depth; }));
  *logits = model.forward_batch(inputs);
  at::removeCallback(handle);
  return calls;
}

// A step that mixes a prompt, decode rows of caches in slots and a decode
// row of a cache of its own: the slotted rows still attend as one group
// (the step's calls do not grow with them), and every row is close to its
// sequence alone, with the same bits when the step runs again.
TEST_F(KvSlotsTest, AMixedStepAttendsItsDecodeRowsInSlotsAsOneGroup) {
  const auto run = [&](int slotted, std::vector<torch::Tensor>* rows, int64_t* step_calls) {
    const auto model = load(8, 32);
    const int64_t vocab = model->config().vocab_size;
    std::vector<std::vector<int32_t>> tokens;
    std::vector<engine::KvCache> caches;
    for (int s = 0; s < slotted + 2; ++s) tokens.push_back(testutil::prompt_tokens(9 + s, vocab, 90 + s));
    for (int s = 0; s < slotted + 2; ++s) {
      // The last two: a cache longer than a slot, and a prompt still to come.
      caches.push_back(model->new_cache(s == slotted ? 64 : 8));
      const size_t known = s == slotted + 1 ? 0 : tokens[s].size() - 1;
      if (known > 0) {
        EXPECT_TRUE(model->forward({tokens[s].begin(), tokens[s].begin() + known}, caches.back()).defined());
      }
    }
    EXPECT_FALSE(caches[slotted].slot);
    std::vector<engine::BatchInput> inputs(caches.size());
    for (size_t s = 0; s < caches.size(); ++s) {
      inputs[s].tokens.assign(tokens[s].begin() + caches[s].length, tokens[s].end());
      inputs[s].kv = &caches[s];
    }
    std::swap(inputs.front(), inputs.back());  // the prompt first: the group is not the step's first rows
    torch::Tensor logits;
    *step_calls = count_calls(*model, inputs, &logits);
    EXPECT_TRUE(logits.defined());
    std::swap(inputs.front(), inputs.back());
    for (size_t s = 0; s < caches.size(); ++s) {
      const int64_t row = s == 0 ? static_cast<int64_t>(caches.size()) - 1 : s == caches.size() - 1 ? 0 : s;
      rows->push_back(logits[row]);
      engine::KvCache kv = model->new_cache(64);
      const torch::Tensor alone = model->forward(tokens[s], kv);
      EXPECT_LT(max_abs_diff(logits[row], alone), 1e-4) << "sequence " << s;
      EXPECT_EQ(logits[row].argmax().item<int64_t>(), alone.argmax().item<int64_t>()) << "sequence " << s;
    }
  };
  std::vector<torch::Tensor> first, again, wider;
  int64_t first_calls = 0, again_calls = 0, wider_calls = 0;
  run(3, &first, &first_calls);
  run(3, &again, &again_calls);
  run(6, &wider, &wider_calls);
  ASSERT_EQ(first.size(), again.size());
  for (size_t s = 0; s < first.size(); ++s) EXPECT_TRUE(testutil::bitwise_equal(first[s], again[s])) << "row " << s;
  EXPECT_EQ(first_calls, again_calls);
  EXPECT_EQ(wider_calls, first_calls) << "three more decode rows in slots cost no more operations";
}

// A recording that fails (here: nothing to record on the CPU) leaves the
// fixed-shape steps eager, with the bits they have without recording.
TEST_F(KvSlotsTest, AFailedGraphRecordingLeavesTheStepsEagerWithTheSameBits) {
  const auto plain = load(6, 32);
  const auto recording = load(6, 32);
  plain->set_static_decode(true);
  recording->set_static_decode(true);
  recording->set_record_graphs(true);
  EXPECT_FALSE(plain->record_graphs());
  const int64_t vocab = plain->config().vocab_size;
  const auto run = [&](const engine::Model& model) {
    std::vector<engine::KvCache> caches;
    std::vector<torch::Tensor> steps;
    for (int s = 0; s < 3; ++s) {
      caches.push_back(model.new_cache(8));
      EXPECT_TRUE(model.forward(testutil::prompt_tokens(9 + s, vocab, 70 + s), caches.back()).defined());
    }
    for (int step = 0; step < 4; ++step) {
      std::vector<engine::BatchInput> inputs(caches.size());
      for (size_t s = 0; s < caches.size(); ++s) {
        inputs[s].tokens = {static_cast<int32_t>(100 + 7 * step + s)};
        inputs[s].kv = &caches[s];
      }
      steps.push_back(model.forward_batch(inputs));
    }
    return steps;
  };
  const std::vector<torch::Tensor> want = run(*plain);
  const std::vector<torch::Tensor> got = run(*recording);
  EXPECT_FALSE(recording->record_graphs());
  EXPECT_NE(recording->graph_failure().find("not on a CUDA device"), std::string::npos) << recording->graph_failure();
  EXPECT_TRUE(plain->graph_failure().empty());
  ASSERT_EQ(got.size(), want.size());
  for (size_t step = 0; step < want.size(); ++step) {
    ASSERT_TRUE(got[step].defined());
    EXPECT_TRUE(testutil::bitwise_equal(got[step], want[step])) << "step " << step;
  }
}

TEST_F(KvSlotsTest, StrictModeRefusesSlots) {
  engine::LoadOptions options;
  options.threads = 1;
  const auto strict = engine::Model::load(dir_, options);
  EXPECT_THROW(strict->reserve_kv_slots(2, 16), std::runtime_error);
}

}  // namespace
}  // namespace reprox
