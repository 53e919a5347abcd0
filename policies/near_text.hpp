// Near-duplicate matching, the text side: normalization, lexical features,
// their cosine, and the SimHash bands that find candidates.
// Pure functions: the same text always gives the same bytes, features and
// keys, on every machine (no locale, no randomness, fixed hash functions).
//
// A request may be answered from the entry of another request whose last user
// message is a near-duplicate of its own (everything else must match
// exactly). The decision for two last user messages a and b is
//   cosine(features_of(normalize(a)), features_of(normalize(b))) >= threshold
//   && !check_guards(a, b).veto                       (policies/near_guards.hpp)
// tests/policies/near_pairs.tsv is the labelled set that measures it.
//
// Why SimHash bands. The index cannot compare a request with every entry, so
// it keeps, per entry, kBands band keys of the entry's 64-bit SimHash and
// looks up the entries that share at least one key with the request; only
// those candidates are scored with cosine(). SimHash approximates the angle:
// one bit of two texts with cosine c agrees with probability
// p = 1 - arccos(c) / pi, so at c = 0.95, p ~= 0.899. A band of r bits agrees
// with probability p^r and at least one of b bands with 1 - (1 - p^r)^b;
// with b = 8 bands of r = 8 bits that is ~= 0.99 at c = 0.95 (and 1 at
// c = 1: the same features give the same hash). A random, unrelated pair
// shares a given band with probability 2^-8, so about 8 * 2^-8 ~= 3% of the
// entries come back as candidates, each then checked by cosine(); questions
// of one domain share phrasing ("how do I ... my ...") and come back more
// often (8.8% of the pairs of different questions in the labelled set).
// Measured on that set: every true pair with cosine >= 0.95 shares a band.
// Bands are cheap to store (8 uint32 keys per entry) and need no training,
// unlike embeddings, and unlike MinHash one hash serves all bands.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace reprox::policy::near {

// NFKC, full Unicode case folding (utf8proc: "STRASSE" and "straße" both give
// "strasse"), every run of whitespace, punctuation, control and modifier
// symbols (^ `) collapsed to one space, and trimmed. An apostrophe between
// two letters is dropped ("don't" and "dont" both give "dont"). Letters,
// marks, digits and the other symbols ($ + = emoji) are kept. Invalid UTF-8
// bytes are read as U+FFFD.
std::string normalize(std::string_view text);

// Feature space: kFeatureBits-bit hashed indexes.
inline constexpr int kFeatureBits = 18;

// Hashed character 2-grams and 3-grams over the normalized text with a space
// on each side (so word boundaries count; no space between two Han or kana
// characters), and word unigrams at half weight (a Han or kana character is
// a word of its own); TF weights, L2-normalized, sorted by index, one entry
// per index. Bigrams keep a one-letter typo in a short question near 0.95;
// trigrams and words keep different words apart. Politeness fillers
// ("please", "hey", "thanks", "quick question", "can you", "can you tell
// me", ...) are left out, unless the text is nothing else. An empty text has
// no features.
struct Features {
  std::vector<std::pair<uint32_t, float>> entries;
};
Features features_of(std::string_view normalized);

// Cosine of two feature vectors, in [0, 1]; 1 for the same non-empty
// features, 0 when either has none (nothing to compare).
double cosine(const Features& a, const Features& b);

// LSH: SimHash of the features (64 bits; 0 for no features), cut into
// kBands bands of 64 / kBands bits.
inline constexpr int kBands = 8;
inline constexpr int kBandBits = 64 / kBands;
uint64_t simhash(const Features& f);

// One value per band, unique across bands: the band index in the top byte,
// the band's bits below it. Two hashes are candidates when they share a key.
std::array<uint32_t, kBands> band_keys(uint64_t simhash);

// Helpers shared with the guards.

// The words of normalize(text): its pieces between spaces.
std::vector<std::string> words_of(std::string_view text);
// NFKC of `text` (valid UTF-8 first), with full case folding when asked.
std::string nfkc(std::string_view text, bool casefold);
// The code points of `text`; each invalid UTF-8 byte is read as U+FFFD.
std::u32string decode_utf8(std::string_view text);
void append_utf8(std::string& out, char32_t cp);
// Letters of the Han ideographs, hiragana and katakana (written without
// spaces between words).
bool is_cjk(char32_t cp);

}  // namespace reprox::policy::near
