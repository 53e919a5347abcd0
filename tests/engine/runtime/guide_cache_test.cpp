#include "engine/runtime/guide_cache.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace reprox::engine {
namespace {

std::shared_ptr<const GuideVocabulary> letters() {
  std::vector<std::string> v = {"", "{", "}", "\"", ":", ",", " "};
  for (char c = 'a'; c <= 'z'; ++c) v.emplace_back(1, c);
  return std::make_shared<const GuideVocabulary>(v, std::vector<std::string>{});
}

GuideSpec choices(std::vector<std::string> list) {
  GuideSpec spec;
  spec.kind = GuideSpec::Kind::kChoice;
  spec.choices = std::move(list);
  return spec;
}

GuideSpec schema(const std::string& text) {
  GuideSpec spec;
  spec.kind = GuideSpec::Kind::kJsonSchema;
  std::string error;
  spec.schema = JsonSchema::compile_text(text, &error);
  EXPECT_TRUE(spec.schema) << error;
  return spec;
}

TEST(GuideCache, RequestsForTheSameGuideShareIt) {
  GuideCache cache;
  const auto vocab = letters();
  GuideSpec json;
  json.kind = GuideSpec::Kind::kJsonObject;
  const auto a = cache.get(json, vocab, {0});
  EXPECT_EQ(cache.get(json, vocab, {0}), a);
  EXPECT_NE(cache.get(json, vocab, {0, 5}), a) << "other end ids, other masks";
  EXPECT_EQ(cache.get(choices({"ab", "c"}), vocab, {0}), cache.get(choices({"ab", "c"}), vocab, {0}));
  EXPECT_NE(cache.get(choices({"ab", "c"}), vocab, {0}), cache.get(choices({"a", "bc"}), vocab, {0}));
  const char* s1 = R"({"type":"object","properties":{"a":{"type":"string"}}})";
  const char* s2 = R"({"type":"object","properties":{"b":{"type":"string"}}})";
  const char* s1_described = R"({"type":"object","description":"notes","properties":{"a":{"type":"string",
      "title":"A"}}})";
  const char* s1_bounded = R"({"type":"object","properties":{"a":{"type":"string","maxLength":9}}})";
  EXPECT_EQ(cache.get(schema(s1), vocab, {0}), cache.get(schema(s1), vocab, {0})) << "compiled apart, same schema";
  EXPECT_EQ(cache.get(schema(s1), vocab, {0}), cache.get(schema(s1_described), vocab, {0})) << "annotations only";
  EXPECT_NE(cache.get(schema(s1), vocab, {0}), cache.get(schema(s2), vocab, {0}));
  EXPECT_NE(cache.get(schema(s1), vocab, {0}), cache.get(schema(s1_bounded), vocab, {0}));
}

TEST(GuideCache, KeepsTheMostRecentGuides) {
  GuideCache cache;
  const auto vocab = letters();
  const auto first = cache.get(choices({"x0"}), vocab, {0});
  for (size_t i = 1; i < GuideCache::kMaxGuides; ++i) cache.get(choices({"x" + std::to_string(i)}), vocab, {0});
  EXPECT_EQ(cache.get(choices({"x0"}), vocab, {0}), first) << "still held, and now the most recent";
  for (size_t i = 0; i < GuideCache::kMaxGuides; ++i) cache.get(choices({"y" + std::to_string(i)}), vocab, {0});
  EXPECT_NE(cache.get(choices({"x0"}), vocab, {0}), first) << "evicted by newer guides";
}

TEST(GuideCache, ASharedGuideWalksEachStateOnce) {
  GuideCache cache;
  const auto vocab = letters();
  GuideSpec json;
  json.kind = GuideSpec::Kind::kJsonObject;
  std::vector<double> logits(static_cast<size_t>(vocab->size()));
  auto answer = [&] {
    TokenGuide::Cursor cursor = cache.get(json, vocab, {0})->start();
    for (const int32_t id : {1, 3, 7, 3, 4, 3, 8, 3, 2}) {  // {"a":"b"}
      cursor.mask(logits.data(), vocab->size());
      cursor.advance(id);
    }
  };
  answer();
  const uint64_t first = vocab->walks();
  EXPECT_GT(first, 0u);
  answer();
  EXPECT_EQ(vocab->walks(), first) << "a second request with the same guide walks no state again";
}

}  // namespace
}  // namespace reprox::engine
