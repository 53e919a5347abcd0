// Near-duplicate text side: normalization, features, cosine, SimHash bands.
#include <gtest/gtest.h>

#include <bitset>
#include <cmath>
#include <set>

#include "policies/near_text.hpp"
#include "tests/support/test_names.hpp"

namespace reprox::policy::near {
namespace {

struct NormalizeCase {
  const char* name;
  const char* text;
  const char* expected;
};

const NormalizeCase kNormalizeCases[] = {
    {"lowercase", "How Do I Reset My Password", "how do i reset my password"},
    {"whitespace_runs", "  reset \t my\n\n password  ", "reset my password"},
    {"punctuation_runs", "Reset... my password?!", "reset my password"},
    {"punctuation_between_words", "reset,my;password", "reset my password"},
    {"fullwidth_letters_digits", "ＲＥＳＥＴ １００", "reset 100"},
    {"ligature", "ﬁle ﬂow", "file flow"},
    {"sharp_s_folds_to_ss", "Straße", "strasse"},
    {"capital_sharp_s", "STRASSE", "strasse"},
    {"greek_final_sigma", "ΣΟΦΊΑ", "σοφία"},
    {"roman_numeral_compat", "Chapter Ⅻ", "chapter xii"},
    {"apostrophe_inside_word", "Don't", "dont"},
    {"curly_apostrophe", "don’t", "dont"},
    {"quote_at_word_edge", "'quoted' words", "quoted words"},
    {"zero_width_space_dropped", "pass\u200Bword", "password"},
    {"nbsp_and_ideographic_space", "a\u00A0b\u3000c", "a b c"},
    {"underscore_is_punctuation", "user_id", "user id"},
    {"symbols_kept", "C++ costs $100 ❤", "c++ costs $100 ❤"},
    {"chinese_punctuation", "你好，世界。", "你好 世界"},
    {"spanish_marks", "¿Cómo estás?", "cómo estás"},
    {"invalid_utf8_is_a_gap", "a\xFF" "b", "a b"},
    {"empty", "", ""},
    {"only_punctuation", " ?!... ", ""},
};

class NearNormalizeTable : public ::testing::TestWithParam<NormalizeCase> {};

TEST_P(NearNormalizeTable, Normalizes) {
  const NormalizeCase& c = GetParam();
  EXPECT_EQ(normalize(c.text), c.expected);
  EXPECT_EQ(normalize(normalize(c.text)), c.expected) << "idempotent";
}

INSTANTIATE_TEST_SUITE_P(Table, NearNormalizeTable, ::testing::ValuesIn(kNormalizeCases),
                         [](const ::testing::TestParamInfo<NormalizeCase>& info) {
                           return testing_support::case_name(info.index, info.param.name);
                         });

double similarity(const char* a, const char* b) {
  return cosine(features_of(normalize(a)), features_of(normalize(b)));
}

TEST(NearFeatures, SortedUniqueInRangeAndUnitLength) {
  const Features f = features_of(normalize("How do I reset my password? My password, again."));
  ASSERT_FALSE(f.entries.empty());
  double norm = 0;
  for (size_t i = 0; i < f.entries.size(); ++i) {
    EXPECT_LT(f.entries[i].first, 1U << kFeatureBits);
    EXPECT_GT(f.entries[i].second, 0.0F);
    if (i > 0) {
      EXPECT_LT(f.entries[i - 1].first, f.entries[i].first);
    }
    norm += static_cast<double>(f.entries[i].second) * f.entries[i].second;
  }
  EXPECT_NEAR(norm, 1.0, 1e-5);
}

TEST(NearFeatures, EmptyTextHasNone) { EXPECT_TRUE(features_of("").entries.empty()); }

TEST(NearFeatures, FillersAreLeftOut) {
  EXPECT_EQ(features_of("please reset my password").entries, features_of("reset my password").entries);
  EXPECT_EQ(features_of("hey quick question can you reset my password thanks").entries,
            features_of("reset my password").entries);
  EXPECT_EQ(features_of("can you please tell me how to reset it").entries, features_of("how to reset it").entries);
}

TEST(NearFeatures, AFillerAloneIsKept) {
  EXPECT_FALSE(features_of("thanks").entries.empty());
  EXPECT_LT(cosine(features_of("thanks"), features_of("hello")), 0.5);
}

TEST(NearFeatures, NoSpaceBetweenHanCharacters) {
  EXPECT_EQ(features_of(normalize("怎么 取消 我的 订阅 ?")).entries,
            features_of(normalize("怎么取消我的订阅？")).entries);
}

struct CosineCase {
  const char* name;
  const char* a;
  const char* b;
  double min, max;
};

const CosineCase kCosineCases[] = {
    {"identical", "How do I reset my password?", "How do I reset my password?", 1.0, 1.0},
    {"case_and_punctuation", "How do I reset my password?", "how do i reset my password", 1.0, 1.0},
    {"filler", "How do I reset my password?", "Hey, how do I reset my password please?", 1.0, 1.0},
    {"one_typo_long", "How do I update the billing address on my invoices?",
     "How do I update the billing adress on my invoices?", 0.95, 0.999},
    {"one_word_differs", "How do I reset my password?", "How do I reset my username?", 0.3, 0.9},
    {"unrelated", "How do I reset my password?", "What payment methods do you accept?", 0.0, 0.4},
    {"other_script", "How do I reset my password?", "如何重置我的密码？", 0.0, 0.05},
    {"empty_side", "", "How do I reset my password?", 0.0, 0.0},
    {"both_empty", "", "", 0.0, 0.0},
};

class NearCosineTable : public ::testing::TestWithParam<CosineCase> {};

TEST_P(NearCosineTable, InRange) {
  const CosineCase& c = GetParam();
  const double ab = similarity(c.a, c.b);
  EXPECT_GE(ab, c.min);
  EXPECT_LE(ab, c.max);
  EXPECT_DOUBLE_EQ(ab, similarity(c.b, c.a)) << "symmetric";
}

INSTANTIATE_TEST_SUITE_P(Table, NearCosineTable, ::testing::ValuesIn(kCosineCases),
                         [](const ::testing::TestParamInfo<CosineCase>& info) {
                           return testing_support::case_name(info.index, info.param.name);
                         });

TEST(NearCosine, AlwaysInZeroOne) {
  const char* texts[] = {"a", "aa", "a a a", "reset password", "password reset", "ß", "ss", "你好", "😀😀"};
  for (const char* a : texts) {
    for (const char* b : texts) {
      const double c = similarity(a, b);
      EXPECT_GE(c, 0.0) << a << " / " << b;
      EXPECT_LE(c, 1.0) << a << " / " << b;
    }
  }
}

TEST(NearSimHash, SameFeaturesSameHashEmptyIsZero) {
  const Features f = features_of(normalize("How do I reset my password?"));
  EXPECT_EQ(simhash(f), simhash(features_of(normalize("HOW DO I RESET MY PASSWORD"))));
  EXPECT_EQ(simhash(Features{}), 0U);
}

// The keys are stored by the index: a change of hashing, features or
// normalization must be a deliberate one (it orphans stored keys).
TEST(NearSimHash, StableAcrossBuilds) {
  EXPECT_EQ(simhash(features_of(normalize("How do I reset my password?"))), 0x0346be907c7d8a7fULL);
}

TEST(NearSimHash, CloseTextsAreCloseInHamming) {
  const auto distance = [](const char* a, const char* b) {
    return std::bitset<64>(simhash(features_of(normalize(a))) ^ simhash(features_of(normalize(b)))).count();
  };
  EXPECT_LE(distance("How do I update the billing address on my invoices?",
                     "How do I update the billing adress on my invoices?"),
            10U);
  EXPECT_GE(distance("How do I reset my password?", "What payment methods do you accept?"), 12U);
}

TEST(NearBands, KeysAreUniqueAcrossBandsAndCarryTheBits) {
  for (uint64_t h : {0ULL, ~0ULL, 0x0123456789ABCDEFULL, 0x0101010101010101ULL}) {
    const auto keys = band_keys(h);
    std::set<uint32_t> unique(keys.begin(), keys.end());
    EXPECT_EQ(unique.size(), static_cast<size_t>(kBands));
    uint64_t rebuilt = 0;
    for (int band = 0; band < kBands; ++band) {
      EXPECT_EQ(keys[band] >> 24, static_cast<uint32_t>(band));
      EXPECT_LT(keys[band] & 0xFFFFFFU, 1U << kBandBits);
      rebuilt |= static_cast<uint64_t>(keys[band] & 0xFFFFFFU) << (band * kBandBits);
    }
    EXPECT_EQ(rebuilt, h);
  }
}

TEST(NearBands, OneDifferentBandLeavesTheOthersShared) {
  const auto a = band_keys(0x1122334455667788ULL), b = band_keys(0x11223344556677FFULL);
  int shared = 0;
  for (int i = 0; i < kBands; ++i) shared += a[i] == b[i];
  EXPECT_EQ(shared, kBands - 1);
}

TEST(NearBands, ExpectedRecallAtCosine095) {
  const double p = 1 - std::acos(0.95) / M_PI;
  const double recall = 1 - std::pow(1 - std::pow(p, kBandBits), kBands);
  EXPECT_NEAR(p, 0.899, 0.001);
  EXPECT_GT(recall, 0.98);
}

}  // namespace
}  // namespace reprox::policy::near
