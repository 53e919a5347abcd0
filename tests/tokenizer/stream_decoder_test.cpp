// StreamDecoder: never emits partial UTF-8, and the concatenated stream equals
// decode(all ids) for every corpus line and every model.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "engine/tokenizer/tokenizer.hpp"
#include "engine/tokenizer/unicode_utils.hpp"
#include "test_util.hpp"

namespace reprox::tok {
namespace {

std::string stream_all(const std::shared_ptr<const Tokenizer>& tok, const std::vector<int32_t>& ids,
                       bool skip_special, std::vector<std::string>* chunks = nullptr) {
  StreamDecoder stream(tok, skip_special);
  std::string out;
  for (int32_t id : ids) {
    std::string piece = stream.push(id);
    EXPECT_TRUE(is_valid_utf8(piece));
    if (chunks) chunks->push_back(piece);
    out += piece;
  }
  std::string rest = stream.flush();
  if (chunks) chunks->push_back(rest);
  return out + rest;
}

void check_corpus(const std::shared_ptr<const Tokenizer>& tok, const char* name) {
  const auto corpus = test::load_corpus();
  size_t failures = 0;
  for (size_t i = 0; i < corpus.size(); ++i) {
    const auto ids = tok->encode(corpus[i], true);
    for (bool skip : {true, false}) {
      const std::string full = tok->decode(ids, skip);
      const std::string streamed = stream_all(tok, ids, skip);
      if (streamed != full && ++failures <= 3)
        ADD_FAILURE() << name << " line " << i + 1 << " skip_special=" << skip << "\n  decode: " << full
                      << "\n  stream: " << streamed;
    }
  }
  EXPECT_EQ(failures, 0u) << name;
}

TEST(StreamDecoder, Qwen3CorpusConcatEqualsDecode) { check_corpus(Tokenizer::load_dir(test::qwen3_dir()), "qwen3"); }
TEST(StreamDecoder, Llama2CorpusConcatEqualsDecode) { check_corpus(Tokenizer::load_dir(test::llama2_dir()), "llama2"); }
TEST(StreamDecoder, Gpt2CorpusConcatEqualsDecode) {
  check_corpus(Tokenizer::load_gpt2(test::gpt2_vocab(), test::gpt2_merges()), "gpt2");
}

// An emoji spelled as four byte-fallback tokens: nothing is emitted until
// the last byte arrives, then the whole character at once.
TEST(StreamDecoder, ByteFallbackEmojiHeldUntilComplete) {
  auto tok = Tokenizer::load_dir(test::llama2_dir());
  const std::string emoji = "\xF0\x9F\xAB\xA0";  // U+1FAE0, not in the Llama-2 vocab
  std::vector<int32_t> ids;
  for (unsigned char b : emoji) {
    char name[8];
    std::snprintf(name, sizeof(name), "<0x%02X>", b);
    auto id = tok->token_to_id(name);
    ASSERT_TRUE(id.has_value()) << name;
    ids.push_back(*id);
  }
  const auto enc = tok->encode(emoji, false);
  ASSERT_GE(enc.size(), 4u);
  EXPECT_TRUE(std::equal(ids.begin(), ids.end(), enc.end() - 4)) << "the emoji is byte-fallback encoded";
  const auto hi = tok->token_to_id("\xE2\x96\x81hi");
  ASSERT_TRUE(hi.has_value());
  StreamDecoder stream(tok);
  EXPECT_EQ(stream.push(*hi), "hi");
  EXPECT_EQ(stream.push(ids[0]), "");
  EXPECT_EQ(stream.push(ids[1]), "");
  EXPECT_EQ(stream.push(ids[2]), "");
  EXPECT_EQ(stream.push(ids[3]), emoji);
  EXPECT_EQ(stream.flush(), "");
}

// Byte-level models split rare characters across tokens too.
TEST(StreamDecoder, ByteLevelSplitCharacterNeverPartial) {
  auto tok = Tokenizer::load_dir(test::qwen3_dir());
  const std::string text = "ok \xF0\x9F\xAB\xA0\xF0\xA0\x80\x80 \xF0\x9F\x91\xA8\xE2\x80\x8D\xF0\x9F\x91\xA9 end";
  const auto ids = tok->encode(text, false);
  std::vector<std::string> chunks;
  EXPECT_EQ(stream_all(tok, ids, true, &chunks), text);
  size_t empty = 0;
  for (const auto& c : chunks) empty += c.empty();
  EXPECT_GT(empty, 0u) << "expected at least one token that completes no character";
}

TEST(StreamDecoder, FlushEmitsHeldBackBytesAsReplacement) {
  auto tok = Tokenizer::load_dir(test::llama2_dir());
  StreamDecoder stream(tok);
  EXPECT_EQ(stream.push(*tok->token_to_id("<0xF0>")), "");
  EXPECT_EQ(stream.push(*tok->token_to_id("<0x9F>")), "");
  const std::string rest = stream.flush();
  EXPECT_EQ(rest, tok->decode({*tok->token_to_id("<0xF0>"), *tok->token_to_id("<0x9F>")}, true));
  EXPECT_TRUE(is_valid_utf8(rest));
}

TEST(StreamDecoder, LeadingSpaceRulesMatchDecode) {
  auto tok = Tokenizer::load_dir(test::llama2_dir());
  const auto ids = tok->encode("  two leading spaces, then words", false);
  for (bool skip : {true, false}) {
    std::vector<int32_t> with_bos{1};
    with_bos.insert(with_bos.end(), ids.begin(), ids.end());
    with_bos.push_back(2);
    with_bos.insert(with_bos.end(), ids.begin(), ids.end());
    EXPECT_EQ(stream_all(tok, with_bos, skip), tok->decode(with_bos, skip));
  }
}

}  // namespace
}  // namespace reprox::tok
