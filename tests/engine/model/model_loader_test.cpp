// Loader errors name what is wrong; sharded weights load; fingerprints are stable.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include <torch/cuda.h>
#include <torch/types.h>

#include "engine/model/model.hpp"
#include "tests/engine/model/load_error.hpp"
#include "tests/engine/model/model_test_util.hpp"
#include "engine/model/safetensors.hpp"

namespace reprox {
namespace {
using testutil::load_error;
namespace fs = std::filesystem;

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void write_text(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
}

void replace_in_file(const fs::path& p, const std::string& from, const std::string& to) {
  std::string text = read_text(p);
  const size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos) << from;
  text.replace(at, from.size(), to);
  write_text(p, text);
}

// Rewrites model.safetensors through `edit` (which may drop or change tensors).
template <typename Edit>
void rewrite_weights(const std::string& dir, Edit edit) {
  std::vector<engine::TensorToWrite> out;
  {
    engine::SafetensorsFile file(dir + "/model.safetensors");
    for (const auto& [name, view] : file.tensors()) {
      engine::TensorToWrite t{name, view.dtype, view.shape, std::vector<uint8_t>(view.data, view.data + view.nbytes)};
      if (edit(t)) out.push_back(std::move(t));
    }
  }
  engine::write_safetensors(dir + "/model.safetensors", out);
}

std::string tiny(const std::string& name, const std::string& arch = "qwen3") {
  const std::string dir = testutil::scratch_dir(name);
  engine::make_tiny_model(testutil::tiny_options(arch, dir));
  return dir;
}

TEST(ModelLoader, MissingConfigFile) {
  const std::string dir = tiny("missing_config");
  fs::remove(fs::path(dir) / "config.json");
  const std::string error = load_error(dir);
  EXPECT_NE(error.find("missing file"), std::string::npos) << error;
  EXPECT_NE(error.find("config.json"), std::string::npos) << error;
}

TEST(ModelLoader, MissingWeightsFile) {
  const std::string dir = tiny("missing_weights");
  fs::remove(fs::path(dir) / "model.safetensors");
  const std::string error = load_error(dir);
  EXPECT_NE(error.find("missing file"), std::string::npos) << error;
  EXPECT_NE(error.find("model.safetensors"), std::string::npos) << error;
}

TEST(ModelLoader, MissingTensorNamesItAndItsShape) {
  const std::string dir = tiny("missing_tensor");
  rewrite_weights(dir, [](const engine::TensorToWrite& t) { return t.name != "model.layers.1.mlp.up_proj.weight"; });
  const std::string error = load_error(dir);
  EXPECT_NE(error.find("missing tensor 'model.layers.1.mlp.up_proj.weight'"), std::string::npos) << error;
  EXPECT_NE(error.find("[128, 64]"), std::string::npos) << error;
}

TEST(ModelLoader, WrongShapeNamesBothShapes) {
  const std::string dir = tiny("wrong_shape");
  rewrite_weights(dir, [](engine::TensorToWrite& t) {
    if (t.name == "model.norm.weight") {
      t.shape = {32};
      t.bytes.resize(32 * 4);
    }
    return true;
  });
  const std::string error = load_error(dir);
  EXPECT_NE(error.find("tensor 'model.norm.weight' has shape [32], expected [64]"), std::string::npos) << error;
}

TEST(ModelLoader, UnsupportedArchitecture) {
  const std::string dir = tiny("unsupported_arch");
  replace_in_file(fs::path(dir) / "config.json", "Qwen3ForCausalLM", "FalconForCausalLM");
  const std::string error = load_error(dir);
  EXPECT_NE(error.find("unsupported architecture 'FalconForCausalLM'"), std::string::npos) << error;
}

// A sliding window smaller than the declared context caps the context: over
// at most `window` positions sliding-window attention is causal attention, so
// every position served gets the model's own logits.
TEST(ModelLoader, MistralSlidingWindowCapsTheContextAtTheWindow) {
  const std::string full_dir = tiny("mistral_full", "mistral");
  const std::string window_dir = tiny("mistral_window", "mistral");
  replace_in_file(fs::path(window_dir) / "config.json", "\"sliding_window\": null", "\"sliding_window\": 32");
  const auto full = engine::Model::load(full_dir);
  const auto windowed = engine::Model::load(window_dir);
  EXPECT_EQ(full->config().max_positions, 256);
  EXPECT_EQ(full->config().sliding_window, 0);
  EXPECT_EQ(windowed->config().max_positions, 32);
  EXPECT_EQ(windowed->config().sliding_window, 32);

  const std::vector<int32_t> prompt = testutil::prompt_tokens(32, full->config().vocab_size);
  engine::KvCache full_kv = full->new_cache();
  engine::KvCache window_kv = windowed->new_cache();
  const torch::Tensor expected = full->forward(prompt, full_kv, true);
  const torch::Tensor got = windowed->forward(prompt, window_kv, true);
  ASSERT_TRUE(got.defined());
  EXPECT_TRUE(torch::equal(expected, got));

  std::string error;
  EXPECT_FALSE(windowed->forward({1}, window_kv, false, &error).defined());
  EXPECT_NE(error.find("exceeds max_positions 32"), std::string::npos) << error;
}

TEST(ModelLoader, MistralWindowAtLeastTheContextChangesNothing) {
  const std::string dir = tiny("mistral_wide_window", "mistral");
  replace_in_file(fs::path(dir) / "config.json", "\"sliding_window\": null", "\"sliding_window\": 4096");
  const auto model = engine::Model::load(dir);
  EXPECT_EQ(model->config().max_positions, 256);
  EXPECT_EQ(model->config().sliding_window, 0);
}

TEST(ModelLoader, QwenSlidingWindowCountsOnlyWhenTurnedOn) {
  const std::string off = tiny("qwen_window_off", "qwen2");
  replace_in_file(fs::path(off) / "config.json", "\"sliding_window\": 256", "\"sliding_window\": 16");
  EXPECT_EQ(engine::Model::load(off)->config().max_positions, 256);

  const std::string on = tiny("qwen_window_on", "qwen2");
  replace_in_file(fs::path(on) / "config.json", "\"use_sliding_window\": false", "\"use_sliding_window\": true");
  replace_in_file(fs::path(on) / "config.json", "\"sliding_window\": 256", "\"sliding_window\": 16");
  const auto model = engine::Model::load(on);
  EXPECT_EQ(model->config().max_positions, 16);
  EXPECT_EQ(model->config().sliding_window, 16);
}

TEST(ModelLoader, ANonPositiveSlidingWindowIsRefused) {
  const std::string dir = tiny("mistral_zero_window", "mistral");
  replace_in_file(fs::path(dir) / "config.json", "\"sliding_window\": null", "\"sliding_window\": 0");
  const std::string error = load_error(dir);
  EXPECT_NE(error.find("sliding_window must be positive"), std::string::npos) << error;
}

TEST(ModelLoader, UnsupportedRopeScalingIsRefused) {
  const std::string dir = tiny("rope_yarn", "llama");
  replace_in_file(fs::path(dir) / "config.json", "\"rope_scaling\": null",
                  "\"rope_scaling\": {\"rope_type\": \"yarn\", \"factor\": 4.0}");
  const std::string error = load_error(dir);
  EXPECT_NE(error.find("unsupported rope_scaling type 'yarn'"), std::string::npos) << error;
}

TEST(ModelLoader, CudaRequestedWithoutCudaIsAClearError) {
  if (torch::cuda::is_available()) GTEST_SKIP() << "CUDA is available here";
  const std::string dir = tiny("no_cuda");
  engine::LoadOptions options;
  options.device = "cuda";
  const std::string error = load_error(dir, options);
  EXPECT_NE(error.find("CUDA is not available"), std::string::npos) << error;
}

TEST(ModelLoader, ReadsEosListAndBosFromGenerationConfig) {
  const std::string dir = tiny("eos_list");
  const auto model = engine::Model::load(dir);
  // Qwen tokenizer: <|im_end|> = 151645 and <|endoftext|> = 151643.
  EXPECT_EQ(model->config().eos_ids, (std::vector<int32_t>{151645, 151643}));
  ASSERT_TRUE(model->config().bos_id.has_value());
  EXPECT_EQ(*model->config().bos_id, 151643);
  EXPECT_EQ(model->config().vocab_size, 151669);
}

TEST(ModelLoader, ShardedWeightsGiveTheSameLogits) {
  const std::string dir = tiny("single_for_shards", "llama");
  const std::string sharded = testutil::scratch_dir("sharded");
  for (const char* f : {"config.json", "generation_config.json"}) {
    fs::copy_file(fs::path(dir) / f, fs::path(sharded) / f);
  }
  std::vector<engine::TensorToWrite> shards[2];
  std::string index = "{\"metadata\": {}, \"weight_map\": {";
  {
    engine::SafetensorsFile file(dir + "/model.safetensors");
    size_t i = 0;
    for (const auto& [name, view] : file.tensors()) {
      const int shard = i++ % 2;
      shards[shard].push_back({name, view.dtype, view.shape, std::vector<uint8_t>(view.data, view.data + view.nbytes)});
      index += (i > 1 ? ", \"" : "\"") + name + "\": \"model-0000" + std::to_string(shard + 1) + "-of-00002.safetensors\"";
    }
  }
  index += "}}";
  engine::write_safetensors(sharded + "/model-00001-of-00002.safetensors", shards[0]);
  engine::write_safetensors(sharded + "/model-00002-of-00002.safetensors", shards[1]);
  write_text(fs::path(sharded) / "model.safetensors.index.json", index);

  const auto a = engine::Model::load(dir);
  const auto b = engine::Model::load(sharded);
  const std::vector<int32_t> prompt = testutil::prompt_tokens(10, a->config().vocab_size);
  engine::KvCache ka = a->new_cache(), kb = b->new_cache();
  EXPECT_TRUE(torch::equal(a->forward(prompt, ka, true), b->forward(prompt, kb, true)));

  fs::remove(fs::path(sharded) / "model-00002-of-00002.safetensors");
  const std::string error = load_error(sharded);
  EXPECT_NE(error.find("missing file"), std::string::npos) << error;
  EXPECT_NE(error.find("model-00002-of-00002.safetensors"), std::string::npos) << error;
}

TEST(ModelLoader, FingerprintIsStableAndTracksConfigAndWeights) {
  const std::string dir = tiny("fingerprint");
  const std::string first = engine::Model::load(dir)->weights_fingerprint();
  EXPECT_EQ(first.size(), 64u);
  EXPECT_EQ(first, engine::Model::load(dir)->weights_fingerprint());

  const std::string other = testutil::scratch_dir("fingerprint_seed");
  engine::TinyModelOptions o = testutil::tiny_options("qwen3", other);
  o.seed = 43;
  engine::make_tiny_model(o);
  EXPECT_NE(first, engine::Model::load(other)->weights_fingerprint());

  replace_in_file(fs::path(dir) / "config.json", "\"rms_norm_eps\": 1e-06", "\"rms_norm_eps\": 1e-05");
  EXPECT_NE(first, engine::Model::load(dir)->weights_fingerprint());
}

}  // namespace
}  // namespace reprox
