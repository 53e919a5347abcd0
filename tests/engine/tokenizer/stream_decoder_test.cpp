// StreamDecoder: never emits partial UTF-8, and the concatenated stream equals
// decode(all ids) for every corpus line and every model.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <functional>

#include "engine/tokenizer/tokenizer.hpp"
#include "engine/tokenizer/unicode_utils.hpp"
#include "tests/engine/tokenizer/test_util.hpp"

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

// An emoji spelled as four byte-fallback tokens: nothing is emitted while
// the byte group is open; it is released with the next ordinary token.
TEST(StreamDecoder, ByteFallbackEmojiHeldUntilGroupEnds) {
  auto tok = Tokenizer::load_dir(test::llama2_dir());
  const std::string emoji = "\xF0\x9F\xAB\xA0";  // U+1FAE0, not in the Llama-2 vocab
  std::vector<int32_t> ids;
  for (unsigned char b : emoji) {
    char name[8];
    std::snprintf(name, sizeof(name), "<0x%02X>", b);
    auto id = tok->token_to_id(name);
    ASSERT_TRUE(id.has_value()) << name;
    EXPECT_TRUE(tok->is_byte_fallback_token(*id));
    ids.push_back(*id);
  }
  const auto enc = tok->encode(emoji, false);
  ASSERT_GE(enc.size(), 4u);
  EXPECT_TRUE(std::equal(ids.begin(), ids.end(), enc.end() - 4)) << "the emoji is byte-fallback encoded";
  const auto hi = tok->token_to_id("\xE2\x96\x81hi");
  const auto the = tok->token_to_id("\xE2\x96\x81the");
  ASSERT_TRUE(hi && the);
  EXPECT_FALSE(tok->is_byte_fallback_token(*hi));
  StreamDecoder stream(tok);
  EXPECT_EQ(stream.push(*hi), "hi");
  for (int32_t id : ids) EXPECT_EQ(stream.push(id), "");
  EXPECT_EQ(stream.push(*the), emoji + " the");
  EXPECT_EQ(stream.flush(), "");
}

// HF's ByteFallback turns a whole invalid byte group into U+FFFDs, so a
// stray byte after a complete character changes that character too.
TEST(StreamDecoder, ByteGroupInvalidatedLaterStillMatchesDecode) {
  auto tok = Tokenizer::load_dir(test::llama2_dir());
  std::vector<int32_t> ids{*tok->token_to_id("\xE2\x96\x81hi"), *tok->token_to_id("<0x0A>"),
                           *tok->token_to_id("<0xA9>"), *tok->token_to_id("a")};
  EXPECT_EQ(tok->decode(ids, true), "hi\xEF\xBF\xBD\xEF\xBF\xBD" "a");
  EXPECT_EQ(stream_all(tok, ids, true), tok->decode(ids, true));
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

// Every id sequence up to length 4 over a small Metaspace model: the stream
// equals decode, including HF's first-token rule of the Metaspace decoder.
TEST(StreamDecoder, MetaspaceAllShortSequences) {
  auto tok = Tokenizer::from_json_text(R"({
    "added_tokens":[{"id":5,"content":"<s>","special":true,"normalized":false}],
    "pre_tokenizer":{"type":"Metaspace","replacement":"\u2581","prepend_scheme":"always","split":true},
    "decoder":{"type":"Metaspace","replacement":"\u2581","prepend_scheme":"always","split":true},
    "model":{"type":"BPE","vocab":{"\u2581":0,"a":1,"b":2,"\u2581a":3,"\u2581\u2581":4},
             "merges":["\u2581 a","\u2581 \u2581"]}})",
                                       "metaspace");
  EXPECT_EQ(tok->encode("a  a", true), (std::vector<int32_t>{3, 0, 3}));
  size_t checked = 0;
  std::vector<int32_t> ids;
  std::function<void()> rec = [&] {
    for (bool skip : {true, false}) {
      EXPECT_EQ(stream_all(tok, ids, skip), tok->decode(ids, skip));
      ++checked;
    }
    if (ids.size() == 4) return;
    for (int32_t id = 0; id < 6; ++id) {
      ids.push_back(id);
      rec();
      ids.pop_back();
    }
  };
  rec();
  EXPECT_GT(checked, 2000u);
}

// Random id sequences over Llama-2's byte tokens, word pieces and specials
// (fixed seed): every chunk is valid UTF-8 and the stream equals decode.
TEST(StreamDecoder, Llama2RandomByteSequences) {
  auto tok = Tokenizer::load_dir(test::llama2_dir());
  std::vector<int32_t> pool{1, 2, 0};
  for (const char* t : {"<0xF0>", "<0x9F>", "<0x98>", "<0x80>", "<0xC3>", "<0xA9>", "<0xE4>", "<0xBD>", "<0xA0>",
                        "<0x0A>", "<0x20>", "\xE2\x96\x81", "\xE2\x96\x81hi", "a", "\xE2\x96\x81the"}) {
    auto id = tok->token_to_id(t);
    ASSERT_TRUE(id.has_value()) << t;
    pool.push_back(*id);
  }
  uint64_t state = 12345;
  auto next = [&] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<size_t>(state >> 33);
  };
  for (int round = 0; round < 3000; ++round) {
    std::vector<int32_t> ids(1 + next() % 12);
    for (auto& id : ids) id = pool[next() % pool.size()];
    const bool skip = round % 2 == 0;
    ASSERT_EQ(stream_all(tok, ids, skip), tok->decode(ids, skip)) << "round " << round;
  }
}

// The same over Qwen3's byte-level single-byte tokens (partial characters),
// ordinary tokens and specials.
TEST(StreamDecoder, Qwen3RandomByteSequences) {
  auto tok = Tokenizer::load_dir(test::qwen3_dir());
  std::vector<int32_t> pool{151643, 151644, 151667};
  for (unsigned char b : std::string("\xF0\x9F\x98\x80\xC3\xA9\xE4\xBD\xA0\x0A a")) {
    auto id = tok->token_to_id(byte_to_unicode(b));
    ASSERT_TRUE(id.has_value());
    pool.push_back(*id);
  }
  for (const char* t : {"hello", "\xC4\xA0world"}) pool.push_back(*tok->token_to_id(t));
  uint64_t state = 777;
  auto next = [&] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<size_t>(state >> 33);
  };
  for (int round = 0; round < 3000; ++round) {
    std::vector<int32_t> ids(1 + next() % 12);
    for (auto& id : ids) id = pool[next() % pool.size()];
    const bool skip = round % 2 == 0;
    ASSERT_EQ(stream_all(tok, ids, skip), tok->decode(ids, skip)) << "round " << round;
  }
}

}  // namespace
}  // namespace reprox::tok
