// Strict mode's weight storage (LoadOptions::weights): a 16-bit checkpoint
// kept 16-bit computes the same bytes as the same checkpoint upcast to fp32
// (logits and greedy tokens); q8 computes the same bytes as fp32 weights that
// hold the dequantized values; memory is what the storage says; checkpoints
// the engine cannot use fail naming the file and the tensor.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>

#include <torch/types.h>

#include "engine/kernels/kernels.hpp"
#include "engine/model/model.hpp"
#include "engine/model/model_config.hpp"
#include "engine/model/model_weights.hpp"
#include "engine/model/safetensors.hpp"
#include "tests/engine/model/logits_compare.hpp"
#include "tests/engine/model/load_error.hpp"
#include "tests/engine/model/model_test_util.hpp"

namespace reprox {
namespace {
using testutil::load_error;
using testutil::bitwise_equal;
using testutil::max_abs_diff;

std::string make_stored_model(const std::string& name, const std::string& arch, const std::string& dtype,
                       int64_t hidden = 0) {
  const std::string dir = testutil::scratch_dir("storage_" + name);
  engine::TinyModelOptions o = testutil::tiny_options(arch, dir);
  o.dtype = dtype;
  if (hidden > 0) {
    o.hidden = hidden;
    o.layers = 1;
    o.vocab_size = 4096;
  }
  o.seed = 5;
  engine::make_tiny_model(o);
  return dir;
}

std::unique_ptr<engine::Model> load_stored(const std::string& dir, const std::string& weights) {
  engine::LoadOptions options;
  options.weights = weights;
  options.progress = false;
  return engine::Model::load(dir, options);
}

// All-position logits of the prompt, then `steps` greedy tokens one at a time.
struct Outputs {
  torch::Tensor logits;
  std::vector<int32_t> tokens;
};
Outputs run(const engine::Model& m, const std::vector<int32_t>& prompt, int steps = 8) {
  Outputs r;
  engine::KvCache kv = m.new_cache();
  r.logits = m.forward(prompt, kv, /*all_logits=*/true);
  torch::Tensor last = r.logits[r.logits.size(0) - 1];
  for (int i = 0; i < steps; ++i) {
    r.tokens.push_back(static_cast<int32_t>(last.argmax().item<int64_t>()));
    last = m.forward({r.tokens.back()}, kv);
  }
  return r;
}

struct StorageCase {
  std::string arch, dtype;
  // Hidden size (0: the tiny default). 1024 makes fp32 rows 4 KiB, which the
  // loader keeps one cache line apart, while 16-bit rows stay back to back.
  int64_t hidden = 0;
  std::string name() const { return arch + "_" + dtype + (hidden > 0 ? "_hidden" + std::to_string(hidden) : ""); }
};

class SixteenBitTest : public ::testing::TestWithParam<StorageCase> {};

TEST_P(SixteenBitTest, KeptSixteenBitEqualsUpcastBitwise) {
  const StorageCase& c = GetParam();
  const std::string dir = make_stored_model(c.name(), c.arch, c.dtype, c.hidden);
  const auto kept = load_stored(dir, "auto");
  const auto upcast = load_stored(dir, "f32");
  EXPECT_EQ(kept->weights_mode(), c.dtype);
  EXPECT_EQ(upcast->weights_mode(), "f32");
  EXPECT_LT(kept->weight_bytes(), upcast->weight_bytes() * 0.55);
  const auto prompt = testutil::prompt_tokens(30, kept->config().vocab_size, 3);
  const Outputs a = run(*kept, prompt), b = run(*upcast, prompt);
  EXPECT_TRUE(bitwise_equal(a.logits, b.logits)) << "differs by " << max_abs_diff(a.logits, b.logits);
  EXPECT_EQ(a.tokens, b.tokens);
  // An fp32 checkpoint converted at load behaves like the 16-bit checkpoint.
  const auto converted = load_stored(make_stored_model(c.name() + "_from_f32", c.arch, "f32", c.hidden), c.dtype);
  EXPECT_EQ(converted->weights_mode(), c.dtype);
  EXPECT_EQ(converted->weight_bytes(), kept->weight_bytes());
  if (c.hidden == 1024) {  // the upcast rows were in fact kept apart, the 16-bit ones not
    const engine::ModelConfig config = engine::load_model_config(dir);
    std::string fingerprint;
    const engine::ModelWeights f32 = engine::load_model_weights(dir, config, {}, false, fingerprint, "f32");
    const engine::ModelWeights f16 = engine::load_model_weights(dir, config, {}, false, fingerprint, "auto");
    EXPECT_EQ(f32.layers[0].wq.stride(0), 1024 + 16);
    EXPECT_EQ(f32.lm_head.stride(0), 1024 + 16);
    EXPECT_EQ(f16.layers[0].wq.stride(0), 1024);
  }
}

INSTANTIATE_TEST_SUITE_P(Checkpoints, SixteenBitTest,
                         ::testing::Values(StorageCase{"qwen3", "bf16"}, StorageCase{"qwen3", "f16"},
                                           StorageCase{"llama", "bf16"}, StorageCase{"gpt2", "bf16"},
                                           StorageCase{"gpt2", "f16"}, StorageCase{"llama", "f16", 1024}),
                         [](const ::testing::TestParamInfo<StorageCase>& info) { return info.param.name(); });

bool is_matrix(const std::string& name) {
  for (const char* suffix : {"proj.weight", "embed_tokens.weight", "lm_head.weight"}) {
    const std::string s(suffix);
    if (name.size() >= s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0) return true;
  }
  return false;
}

// Rewrites an fp32 checkpoint so every weight matrix holds its q8 values
// dequantized (kernels::quantize_q8 then widen_rows), as fp32.
void dequantize_in_place(const std::string& dir) {
  std::vector<engine::TensorToWrite> out;
  {
    engine::SafetensorsFile file(dir + "/model.safetensors");
    for (const auto& [name, view] : file.tensors()) {
      engine::TensorToWrite t{name, view.dtype, view.shape, std::vector<uint8_t>(view.data, view.data + view.nbytes)};
      if (is_matrix(name)) {
        const int64_t rows = view.shape[0], cols = view.shape[1];
        std::vector<float> w(static_cast<size_t>(rows * cols));
        std::memcpy(w.data(), view.data, view.nbytes);
        std::vector<uint8_t> q(static_cast<size_t>(rows * kernels::q8_row_bytes(cols)));
        kernels::quantize_q8(w.data(), rows, cols, q.data());
        std::vector<int64_t> ids(static_cast<size_t>(rows));
        for (int64_t i = 0; i < rows; ++i) ids[static_cast<size_t>(i)] = i;
        kernels::widen_rows({kernels::WeightType::kQ8, q.data()}, cols, ids.data(), rows, w.data());
        std::memcpy(t.bytes.data(), w.data(), view.nbytes);
      }
      out.push_back(std::move(t));
    }
  }
  engine::write_safetensors(dir + "/model.safetensors", out);
}

TEST(Q8Weights, EqualsFp32OnDequantizedWeightsBitwise) {
  for (const std::string arch : {"qwen3", "llama"}) {
    const std::string dir = make_stored_model("q8_" + arch, arch, "f32");
    const auto q8 = load_stored(dir, "q8");
    EXPECT_EQ(q8->weights_mode(), "q8");
    const std::string deq = make_stored_model("q8_deq_" + arch, arch, "f32");
    dequantize_in_place(deq);
    const auto f32 = load_stored(deq, "f32");
    const auto prompt = testutil::prompt_tokens(30, q8->config().vocab_size, 4);
    const Outputs a = run(*q8, prompt), b = run(*f32, prompt);
    EXPECT_TRUE(bitwise_equal(a.logits, b.logits)) << arch << " differs by " << max_abs_diff(a.logits, b.logits);
    EXPECT_EQ(a.tokens, b.tokens) << arch;
  }
}

TEST(Q8Weights, StaysCloseToFp32AndIsAboutAQuarterOfTheBytes) {
  const std::string dir = make_stored_model("q8_close", "qwen3", "f32");
  const auto q8 = load_stored(dir, "q8");
  const auto f32 = load_stored(dir, "auto");
  const auto prompt = testutil::prompt_tokens(30, q8->config().vocab_size, 6);
  const Outputs a = run(*q8, prompt, 0), b = run(*f32, prompt, 0);
  // Within 5% of the logits' range, and the same top-1 token at most positions.
  EXPECT_LT(max_abs_diff(a.logits, b.logits), 0.05 * b.logits.abs().max().item<double>());
  EXPECT_GT(max_abs_diff(a.logits, b.logits), 0.0);
  const double agree = (a.logits.argmax(1) == b.logits.argmax(1)).to(torch::kFloat64).mean().item<double>();
  EXPECT_GE(agree, 0.8);
  EXPECT_LT(q8->weight_bytes(), f32->weight_bytes() * 0.32);
}

TEST(WeightStorage, OptionErrorsAreClear) {
  const std::string dir = make_stored_model("option_errors", "qwen3", "f32");
  engine::LoadOptions options;
  options.weights = "q4";
  EXPECT_NE(load_error(dir, options).find("unsupported weights 'q4' (supported: auto, f32, f16, bf16, q8)"),
            std::string::npos);
  options.weights = "q8";
  options.numeric_mode = "fast";
  EXPECT_NE(load_error(dir, options).find("weights 'q8' needs numeric_mode 'strict'"), std::string::npos);
}

// Rewrites model.safetensors, letting `edit` change a tensor or add more.
template <typename Edit>
void rewrite(const std::string& dir, Edit edit) {
  std::vector<engine::TensorToWrite> out;
  {
    engine::SafetensorsFile file(dir + "/model.safetensors");
    for (const auto& [name, view] : file.tensors()) {
      out.push_back({name, view.dtype, view.shape, std::vector<uint8_t>(view.data, view.data + view.nbytes),
                     view.dtype_text});
      edit(out.back());
    }
    if (file.find("model.unused_buffer") == nullptr) {
      out.push_back({"model.unused_buffer", engine::DType::Other, {4}, std::vector<uint8_t>(32), "I64"});
    }
  }
  engine::write_safetensors(dir + "/model.safetensors", out);
}

TEST(WeightStorage, AnUnusableDtypeNamesTheFileAndTheTensor) {
  const std::string dir = make_stored_model("bad_dtype", "qwen3", "f32");
  rewrite(dir, [](engine::TensorToWrite&) {});
  EXPECT_NO_THROW(load_stored(dir, "auto")) << "an unused I64 tensor must not stop the load";
  rewrite(dir, [](engine::TensorToWrite& t) {
    if (t.name == "model.layers.0.self_attn.k_proj.weight") {
      t.dtype = engine::DType::Other;
      t.other_dtype = "I32";
    }
  });
  engine::LoadOptions options;
  const std::string error = load_error(dir, options);
  EXPECT_NE(error.find("tensor 'model.layers.0.self_attn.k_proj.weight' in " + dir + "/model.safetensors has dtype "
                       "I32, which the engine cannot use"),
            std::string::npos)
      << error;
}

TEST(WeightStorage, AnUnknownDtypeNamesTheFileAndTheTensor) {
  const std::string dir = make_stored_model("unknown_dtype", "qwen3", "f32");
  std::string text;
  {
    std::ifstream in(dir + "/model.safetensors", std::ios::binary);
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const std::string from = "\"model.norm.weight\":{\"dtype\":\"F32\"", to = "\"model.norm.weight\":{\"dtype\":\"F99\"";
  const size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, from.size(), to);
  std::ofstream(dir + "/model.safetensors", std::ios::binary | std::ios::trunc) << text;
  const std::string error = load_error(dir, engine::LoadOptions{});
  EXPECT_NE(error.find(dir + "/model.safetensors"), std::string::npos) << error;
  EXPECT_NE(error.find("unknown dtype 'F99' for tensor 'model.norm.weight'"), std::string::npos) << error;
}

TEST(WeightStorage, AWrongShapeNamesTheFile) {
  const std::string dir = make_stored_model("bad_shape", "qwen3", "bf16");
  rewrite(dir, [](engine::TensorToWrite& t) {
    if (t.name == "model.layers.1.mlp.down_proj.weight") t.shape = {t.shape[1], t.shape[0]};
  });
  const std::string error = load_error(dir, engine::LoadOptions{});
  EXPECT_NE(error.find("tensor 'model.layers.1.mlp.down_proj.weight' has shape [128, 64], expected [64, 128] (in " +
                       dir + "/model.safetensors)"),
            std::string::npos)
      << error;
}

}  // namespace
}  // namespace reprox
