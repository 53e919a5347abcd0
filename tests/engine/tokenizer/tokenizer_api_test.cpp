// Public API: loading and its errors, GPT-2 specials, concurrency, the CLI.
#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <sstream>
#include <thread>

#include "engine/tokenizer/tokenize_cli.hpp"
#include "engine/tokenizer/tokenizer.hpp"
#include "tests/engine/tokenizer/test_util.hpp"

namespace reprox::tok {
namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST(TokenizerApi, LoadErrorsNameTheProblem) {
  const std::string missing = error_of([] { Tokenizer::load_dir("/nonexistent/model"); });
  EXPECT_NE(missing.find("/nonexistent/model/tokenizer.json"), std::string::npos) << missing;
  EXPECT_NE(missing.find("merges.txt"), std::string::npos) << missing;

  const std::string wordpiece = error_of([] {
    Tokenizer::from_json_text(R"({"model":{"type":"WordPiece","vocab":{}}})", "wp.json");
  });
  EXPECT_NE(wordpiece.find("WordPiece"), std::string::npos) << wordpiece;
  EXPECT_NE(wordpiece.find("wp.json"), std::string::npos) << wordpiece;

  const std::string norm = error_of([] {
    Tokenizer::from_json_text(R"({"normalizer":{"type":"BertNormalizer"},"model":{"type":"BPE","vocab":{"a":0},"merges":[]}})",
                              "n.json");
  });
  EXPECT_NE(norm.find("BertNormalizer"), std::string::npos) << norm;

  const std::string merge = error_of([] {
    Tokenizer::from_json_text(R"({"model":{"type":"BPE","vocab":{"a":0},"merges":["a b"]}})", "m.json");
  });
  EXPECT_NE(merge.find("a b"), std::string::npos) << merge;
}

TEST(TokenizerApi, VocabAndSpecials) {
  auto qwen = Tokenizer::load_dir(test::qwen3_dir());
  EXPECT_EQ(qwen->token_to_id("<|im_start|>"), 151644);
  EXPECT_TRUE(qwen->is_special(151644));
  EXPECT_FALSE(qwen->is_special(151667));  // <think> is added but not special
  EXPECT_EQ(qwen->id_to_token(151645), "<|im_end|>");
  EXPECT_EQ(qwen->vocab_size(), 151669);
  EXPECT_EQ(qwen->encode("<|im_start|>", true), (std::vector<int32_t>{151644}));
  EXPECT_GT(qwen->encode("<|im_start|>", false).size(), 1u);
  EXPECT_EQ(qwen->encode("<think>", false), (std::vector<int32_t>{151667}));
}

TEST(TokenizerApi, Gpt2EndOfTextIsSpecial) {
  auto gpt2 = Tokenizer::load_gpt2(test::gpt2_vocab(), test::gpt2_merges());
  EXPECT_EQ(gpt2->encode("hi<|endoftext|>", true), (std::vector<int32_t>{5303, 50256}));
  EXPECT_GT(gpt2->encode("<|endoftext|>", false).size(), 1u);
  EXPECT_EQ(gpt2->decode({5303, 50256}, true), "hi");
  EXPECT_EQ(gpt2->vocab_size(), 50257);
}

TEST(TokenizerApi, InvalidUtf8InputIsReplacedNotFatal) {
  auto qwen = Tokenizer::load_dir(test::qwen3_dir());
  EXPECT_EQ(qwen->encode("a\xFF" "b", false), qwen->encode("a\xEF\xBF\xBD" "b", false));
}

TEST(TokenizerApi, ConcurrentEncodeMatchesSequential) {
  auto tok = Tokenizer::load_dir(test::qwen3_dir());
  const auto corpus = test::load_corpus();
  std::vector<std::vector<int32_t>> expected;
  for (const auto& s : corpus) expected.push_back(tok->encode(s, true));
  std::atomic<size_t> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (size_t i = static_cast<size_t>(t); i < corpus.size(); i += 2) {
        if (tok->encode(corpus[i], true) != expected[i]) ++mismatches;
        (void)tok->decode(expected[i], true);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(mismatches.load(), 0u);
}

// token_bytes: the first token's bytes then every other's, joined, are the
// decoded text, for byte-level (Qwen3, GPT-2) and SentencePiece-style
// (Llama 2: a leading space dropped, byte fallback) tokenizers alike.
TEST(TokenizerApi, TokenBytesJoinToTheDecodedText) {
  const std::vector<std::shared_ptr<const Tokenizer>> tokenizers = {
      Tokenizer::load_dir(test::qwen3_dir()), Tokenizer::load_dir(test::llama2_dir()),
      Tokenizer::load_gpt2(test::gpt2_vocab(), test::gpt2_merges())};
  const auto corpus = test::load_corpus();
  for (const auto& tok : tokenizers) {
    const auto after = tok->token_bytes(false);
    const auto first = tok->token_bytes(true);
    ASSERT_EQ(after.size(), static_cast<size_t>(tok->vocab_size()));
    size_t checked = 0;
    for (const auto& text : corpus) {
      const auto ids = tok->encode(text, false);
      if (ids.empty()) continue;
      std::string joined = first[static_cast<size_t>(ids[0])];
      for (size_t i = 1; i < ids.size(); ++i) joined += after[static_cast<size_t>(ids[i])];
      EXPECT_EQ(joined, tok->decode(ids, true)) << text;
      ++checked;
    }
    EXPECT_GT(checked, 20u);
  }
  // A byte fallback token is its raw byte, not U+FFFD.
  const auto llama = Tokenizer::load_dir(test::llama2_dir());
  const auto bytes = llama->token_bytes(false);
  EXPECT_EQ(bytes[static_cast<size_t>(*llama->token_to_id("<0xC3>"))], "\xC3");
  EXPECT_EQ(llama->token_bytes(true)[static_cast<size_t>(*llama->token_to_id("\xE2\x96\x81the"))], "the");
  EXPECT_EQ(bytes[static_cast<size_t>(*llama->token_to_id("\xE2\x96\x81the"))], " the");
}

TEST(TokenizeCli, OneArrayPerLine) {
  std::istringstream in("\"Hello world\"\n\"<|im_start|>\"\n");
  std::ostringstream out;
  EXPECT_EQ(run_tokenize_cli(test::qwen3_dir(), true, in, out), 0);
  auto tok = Tokenizer::load_dir(test::qwen3_dir());
  const auto a = tok->encode("Hello world", true);
  std::string expected = "[";
  for (size_t i = 0; i < a.size(); ++i) expected += (i ? "," : "") + std::to_string(a[i]);
  expected += "]\n[151644]\n";
  EXPECT_EQ(out.str(), expected);
}

TEST(TokenizeCli, BadLineFails) {
  std::istringstream in("\"ok\"\nnot json\n");
  std::ostringstream out;
  EXPECT_NE(run_tokenize_cli(test::qwen3_dir(), false, in, out), 0);
  std::istringstream in2("\"ok\"\n");
  EXPECT_NE(run_tokenize_cli("/nonexistent", false, in2, out), 0);
}

}  // namespace
}  // namespace reprox::tok
