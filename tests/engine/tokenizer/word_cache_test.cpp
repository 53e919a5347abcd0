// The BPE word cache: what it keeps, that it never answers another word's
// ids, and that a tokenizer's heap stays flat however many distinct words it
// encodes (a server sees new words forever: generated text, counters, ids).
#include <gtest/gtest.h>
#include <malloc.h>

#include <string>
#include <vector>

#include "engine/tokenizer/tokenizer.hpp"
#include "engine/tokenizer/word_cache.hpp"

namespace reprox::tok {
namespace {

using Ids = std::vector<int32_t>;

Ids found(const WordCache& c, std::string_view word) {
  Ids out{-1};  // find() appends
  if (!c.find(word, out)) return {};
  return Ids(out.begin() + 1, out.end());
}

TEST(WordCache, FindsWhatWasPut) {
  WordCache c({64, 12, 28});
  const Ids ids{7, 8, 9};
  c.put("hello", ids.data(), ids.size());
  EXPECT_EQ(found(c, "hello"), ids);
  EXPECT_TRUE(found(c, "hell").empty());
  Ids none, out;
  c.put("dropped", none.data(), 0);  // a word whose characters were all dropped
  EXPECT_TRUE(c.find("dropped", out));
  EXPECT_TRUE(out.empty());
  EXPECT_FALSE(c.find("", out));
}

TEST(WordCache, RefusesWhatDoesNotFitASlot) {
  WordCache c({64, 12, 28});  // words up to 12 bytes; word and 4 bytes per id in 28
  const std::string long_word(13, 'x');
  const Ids one{1}, seven(7, 3), four(4, 4);
  EXPECT_FALSE(c.put(long_word, one.data(), one.size()));
  EXPECT_FALSE(c.put("many", seven.data(), seven.size()));  // 4 + 28 bytes
  Ids out;
  EXPECT_FALSE(c.find(long_word, out));
  EXPECT_FALSE(c.find("many", out));
  EXPECT_TRUE(out.empty());
  const std::string longest(12, 'y');
  EXPECT_TRUE(c.put(longest, four.data(), four.size()));  // 12 + 16 bytes
  EXPECT_EQ(found(c, longest), four);
}

TEST(WordCache, ReplacesTheLeastRecentlyUsed) {
  WordCache c({4, 12, 28});  // one set of four ways
  ASSERT_EQ(c.shape().slots, 4u);
  const Ids a{1}, b{2}, x{3}, y{4}, e{5};
  EXPECT_TRUE(c.put("a", a.data(), 1));
  EXPECT_TRUE(c.put("b", b.data(), 1));
  EXPECT_TRUE(c.put("x", x.data(), 1));
  EXPECT_TRUE(c.put("y", y.data(), 1));
  EXPECT_EQ(found(c, "a"), a);  // now "b" is the least recently used
  EXPECT_TRUE(c.put("e", e.data(), 1));
  EXPECT_TRUE(found(c, "b").empty());
  EXPECT_EQ(found(c, "a"), a);
  EXPECT_EQ(found(c, "x"), x);
  EXPECT_EQ(found(c, "y"), y);
  EXPECT_EQ(found(c, "e"), e);
  EXPECT_TRUE(c.put("a", b.data(), 1));  // a word stored again takes its own slot
  EXPECT_EQ(found(c, "a"), b);
  EXPECT_EQ(found(c, "e"), e);
}

TEST(WordCache, NeverAnswersAnotherWordsIds) {
  WordCache c({8, 12, 28});
  for (int32_t i = 0; i < 5000; ++i) {
    const Ids ids{i, i + 1};
    c.put("w" + std::to_string(i), ids.data(), ids.size());
  }
  int hits = 0;
  for (int32_t i = 0; i < 5000; ++i) {
    const Ids got = found(c, "w" + std::to_string(i));
    if (got.empty()) continue;
    ++hits;
    EXPECT_EQ(got, (Ids{i, i + 1})) << i;
  }
  EXPECT_GT(hits, 0);
  EXPECT_LE(hits, 8);
}

TEST(WordCache, FootprintIsFixed) {
  WordCache c({1000, 12, 28});
  EXPECT_EQ(c.shape().slots, 1024u);
  const size_t bytes = c.bytes();
  EXPECT_GE(bytes, 1024u * 28);
  const Ids ids{1, 2};
  for (int i = 0; i < 100000; ++i) c.put("w" + std::to_string(i), ids.data(), ids.size());
  EXPECT_EQ(c.bytes(), bytes);
}

// Distinct words of a, b and c, `n` letters each (3^n of them).
std::string word_number(size_t i, size_t n) {
  std::string w(n, 'a');
  for (size_t k = 0; k < n; ++k, i /= 3) w[k] = char('a' + i % 3);
  return w;
}

size_t heap_in_use() {
  const struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
}

TEST(TokenizerMemory, HeapStaysFlatOverDistinctWords) {
#ifdef REPROX_SANITIZER_BUILD
  GTEST_SKIP() << "the sanitizers' allocator is not glibc's";
#endif
  // No pre-tokenizer: each text is one word, merged by "a b" and "ab c".
  auto tok = Tokenizer::from_json_text(
      R"({"version":"1.0","added_tokens":[],"normalizer":null,"pre_tokenizer":null,"decoder":null,
          "model":{"type":"BPE","unk_token":"<unk>","vocab":{"<unk>":0,"a":3,"b":4,"ab":5,"c":7,"abc":8},
                   "merges":[["a","b"],"ab c"]}})",
      "memory");
  size_t tokens = 0;
  for (size_t i = 0; i < 2000; ++i) tokens += tok->encode(word_number(i, 10), false).size();
  const size_t before = heap_in_use();
  for (size_t i = 0; i < 59049; ++i) tokens += tok->encode(word_number(i, 10), false).size();  // 3^10 words
  const size_t after = heap_in_use();
  EXPECT_GT(tokens, 0u);
  // A cache that keeps every distinct word grows by megabytes here.
  EXPECT_LT(after, before + 64 * 1024) << "heap grew by " << (after - before) << " bytes";
}

}  // namespace
}  // namespace reprox::tok
