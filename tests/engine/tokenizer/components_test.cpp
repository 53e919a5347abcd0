// Unit tests of each pipeline component against Hugging Face's documented
// behaviour, plus small hand-built tokenizer.json models.
#include <gtest/gtest.h>
#include <utf8proc.h>

#include "engine/tokenizer/decoders.hpp"
#include "engine/tokenizer/normalizers.hpp"
#include "engine/tokenizer/pre_tokenizers.hpp"
#include "engine/tokenizer/tokenizer.hpp"
#include "engine/tokenizer/unicode_utils.hpp"

namespace reprox::tok {
namespace {

std::vector<std::string> texts(const std::vector<Piece>& pieces) {
  std::vector<std::string> out;
  for (const auto& p : pieces) out.push_back(p.text);
  return out;
}

using Strings = std::vector<std::string>;

// --- normalizers -----------------------------------------------------------

TEST(Normalizers, NfcComposesCombiningMarks) {
  auto n = make_unicode_normalizer(UnicodeForm::NFC);
  EXPECT_EQ(n->normalize("e\xCC\x81"), "\xC3\xA9");                 // e + U+0301 -> é
  EXPECT_EQ(n->normalize("A\xCC\x8A"), "\xC3\x85");                 // A + ring -> Å
  EXPECT_EQ(n->normalize("plain ascii"), "plain ascii");
  EXPECT_EQ(make_unicode_normalizer(UnicodeForm::NFD)->normalize("\xC3\xA9"), "e\xCC\x81");
}

// The NFC fast path skips utf8proc for "inert" code points. Check each one
// against utf8proc: combining class 0, unchanged by NFC alone, and unchanged
// next to a sample of other inert code points.
TEST(Normalizers, NfcFastPathCodePointsAreInert) {
  std::vector<std::string> inert;
  for (char32_t cp = 0x80; cp < 0x20000; ++cp) {
    if (!nfc_inert(cp)) continue;
    EXPECT_EQ(utf8proc_get_property(static_cast<utf8proc_int32_t>(cp))->combining_class, 0) << std::hex << cp;
    std::string s;
    utf8_append(s, cp);
    inert.push_back(s);
  }
  ASSERT_GT(inert.size(), 30000u);
  size_t bad = 0;
  for (size_t i = 0; i < inert.size(); ++i) {
    if (normalize_nfc_utf8proc(inert[i]) != inert[i]) ++bad;
    const std::string pair = inert[i] + inert[(i * 7919) % inert.size()];
    if (normalize_nfc_utf8proc(pair) != pair) ++bad;
  }
  EXPECT_EQ(bad, 0u);
}

TEST(Normalizers, PrependOnlyNonEmpty) {
  auto n = make_prepend_normalizer("\xE2\x96\x81");
  EXPECT_EQ(n->normalize("hi"), "\xE2\x96\x81hi");
  EXPECT_EQ(n->normalize(""), "");
}

TEST(Normalizers, ReplaceStringAndRegex) {
  EXPECT_EQ(make_replace_normalizer(Pattern::literal(" "), "_")->normalize("a b  c"), "a_b__c");
  EXPECT_EQ(make_replace_normalizer(Pattern::regex(" +"), " ")->normalize("a b   c"), "a b c");
}

TEST(Normalizers, SequenceAppliesInOrder) {
  std::vector<std::unique_ptr<Normalizer>> steps;
  steps.push_back(make_prepend_normalizer("\xE2\x96\x81"));
  steps.push_back(make_replace_normalizer(Pattern::literal(" "), "\xE2\x96\x81"));
  auto n = make_sequence_normalizer(std::move(steps));
  EXPECT_EQ(n->normalize("Hey friend"), "\xE2\x96\x81Hey\xE2\x96\x81" "friend");
}

TEST(Normalizers, StripUnicodeWhitespace) {
  EXPECT_EQ(make_strip_normalizer(true, true)->normalize("\xE3\x80\x80 x y\t\n"), "x y");
  EXPECT_EQ(make_strip_normalizer(false, true)->normalize("  x  "), "  x");
}

// --- split behaviours (HF docs: "the-final--countdown" split on '-') -------

std::vector<std::string> split_dash(SplitBehavior b, bool invert = false) {
  const Piece p{"the-final--countdown", true};
  return texts(split_piece(p, Pattern::literal("-").find_all(p.text), b, invert));
}

TEST(PreTokenizers, SplitBehaviorsMatchHfDocs) {
  EXPECT_EQ(split_dash(SplitBehavior::Removed), (Strings{"the", "final", "countdown"}));
  EXPECT_EQ(split_dash(SplitBehavior::Isolated), (Strings{"the", "-", "final", "-", "-", "countdown"}));
  EXPECT_EQ(split_dash(SplitBehavior::MergedWithPrevious), (Strings{"the-", "final-", "-", "countdown"}));
  EXPECT_EQ(split_dash(SplitBehavior::MergedWithNext), (Strings{"the", "-final", "-", "-countdown"}));
  EXPECT_EQ(split_dash(SplitBehavior::Contiguous), (Strings{"the", "-", "final", "--", "countdown"}));
}

TEST(PreTokenizers, SplitInvertKeepsMatchesAsContent) {
  // Inverted, the words are the "delimiters": Removed drops them.
  EXPECT_EQ(split_dash(SplitBehavior::Removed, true), (Strings{"-", "-", "-"}));
  const Piece p{"ab12cd", true};
  auto parts = split_piece(p, Pattern::regex("\\p{N}+").find_all(p.text), SplitBehavior::MergedWithPrevious, true);
  // Inverted: "ab" and "cd" are matches and merge into the preceding piece.
  EXPECT_EQ(texts(parts), (Strings{"ab", "12cd"}));
}

TEST(PreTokenizers, SplitRegexQwenPattern) {
  auto pre = make_split_pre_tokenizer(
      Pattern::regex("(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
                     "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"),
      SplitBehavior::Isolated, false);
  std::vector<Piece> pieces{{"IT'S 123  ok\n\nx", true}};
  pre->pre_tokenize(pieces);
  EXPECT_EQ(texts(pieces), (Strings{"IT", "'S", " ", "1", "2", "3", " ", " ok", "\n\n", "x"}));
}

// HF's regexes run on Oniguruma, whose \s is exactly Unicode White_Space;
// PCRE2's UCP \s also matches U+180E, so patterns are rewritten.
TEST(PreTokenizers, WhitespaceClassIsUnicodeWhiteSpace) {
  const Pattern ws = Pattern::regex("\\s+");
  EXPECT_TRUE(ws.find_all("a\xE1\xA0\x8E" "b").empty());     // U+180E is not White_Space
  EXPECT_EQ(ws.find_all("a\xC2\x85" "b").size(), 1u);          // U+0085 NEL is
  EXPECT_EQ(ws.find_all("a\xE3\x80\x80" "b").size(), 1u);     // U+3000
  const Pattern not_ws_or_letter = Pattern::regex("[^\\s\\p{L}]+");
  EXPECT_EQ(not_ws_or_letter.find_all("\xE1\xA0\x8E").size(), 1u);
  const Pattern non_space = Pattern::regex("\\S+");
  EXPECT_EQ(non_space.find_all("\xE1\xA0\x8E").size(), 1u);
}

// Long runs of one class must not hit PCRE2's JIT stack limit.
TEST(PreTokenizers, LongRunsSplitLikeShortOnes) {
  const Pattern p = Pattern::regex(gpt2_split_regex());
  const std::string spaces(300000, ' ');
  const auto m = p.find_all(spaces + "x");
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].end, spaces.size() - 1);
  EXPECT_EQ(m[1].begin, spaces.size() - 1);
}

TEST(PreTokenizers, ByteLevelMapsBytesAndAddsPrefixSpace) {
  auto pre = make_byte_level_pre_tokenizer(true, true);
  std::vector<Piece> pieces{{"Hello world", true}};
  pre->pre_tokenize(pieces);
  EXPECT_EQ(texts(pieces), (Strings{"\xC4\xA0Hello", "\xC4\xA0world"}));  // ĠHello Ġworld
  std::vector<Piece> nl{{"a\nb", true}};
  make_byte_level_pre_tokenizer(false, false)->pre_tokenize(nl);
  EXPECT_EQ(texts(nl), (Strings{"a\xC4\x8A" "b"}));  // \n -> Ċ
}

TEST(PreTokenizers, MetaspaceHfExamples) {
  const std::string m = "\xE2\x96\x81";
  auto pre = make_metaspace_pre_tokenizer(m, PrependScheme::Always, true);
  std::vector<Piece> a{{"Hey friend!", true}};
  pre->pre_tokenize(a);
  EXPECT_EQ(texts(a), (Strings{m + "Hey", m + "friend!"}));
  std::vector<Piece> b{{"Hey   friend!", true}};
  pre->pre_tokenize(b);
  EXPECT_EQ(texts(b), (Strings{m + "Hey", m, m, m + "friend!"}));
}

TEST(PreTokenizers, MetaspacePrependSchemes) {
  const std::string m = "\xE2\x96\x81";
  auto first = make_metaspace_pre_tokenizer(m, PrependScheme::First, false);
  std::vector<Piece> at0{{"hi there", true}};
  first->pre_tokenize(at0);
  EXPECT_EQ(texts(at0), (Strings{m + "hi" + m + "there"}));
  std::vector<Piece> later{{"hi", false}};  // a section after an added token
  first->pre_tokenize(later);
  EXPECT_EQ(texts(later), (Strings{"hi"}));
  std::vector<Piece> never{{"hi", true}};
  make_metaspace_pre_tokenizer(m, PrependScheme::Never, false)->pre_tokenize(never);
  EXPECT_EQ(texts(never), (Strings{"hi"}));
}

// --- decoders ---------------------------------------------------------------

TEST(Decoders, ByteFallbackInvalidBytesBecomeOneReplacementEach) {
  auto d = make_byte_fallback_decoder();
  Strings t{"a", "<0xC3>", "<0xA9>", "b", "<0xE2>", "<0x82>", "c"};
  d->decode_chain(t);
  EXPECT_EQ(t, (Strings{"a", "\xC3\xA9", "b", "\xEF\xBF\xBD", "\xEF\xBF\xBD", "c"}));
}

TEST(Decoders, ByteLevelIsLossyOnInvalidUtf8) {
  auto d = make_byte_level_decoder();
  Strings t{"\xC4\xA0hi", "\xC3\xB0\xC5\x81"};  // " hi" + bytes F0 9F (truncated emoji)
  d->decode_chain(t);
  EXPECT_EQ(t, (Strings{" hi\xEF\xBF\xBD"}));
}

TEST(Decoders, StripAndMetaspace) {
  Strings t{"  a  ", " b"};
  make_strip_decoder(" ", 1, 1)->decode_chain(t);
  EXPECT_EQ(t, (Strings{" a ", "b"}));
  const std::string m = "\xE2\x96\x81";
  Strings u{m + "Hey", m + "friend!"};
  make_metaspace_decoder(m, PrependScheme::Always)->decode_chain(u);
  EXPECT_EQ(u, (Strings{"Hey", " friend!"}));
  // HF drops every replacement in the first token, not only a leading one.
  Strings v{m + "a" + m, m + "b"};
  make_metaspace_decoder(m, PrependScheme::First)->decode_chain(v);
  EXPECT_EQ(v, (Strings{"a", " b"}));
  Strings w{m + "a", m + "b"};
  make_metaspace_decoder(m, PrependScheme::Never)->decode_chain(w);
  EXPECT_EQ(w, (Strings{" a", " b"}));
}

TEST(Unicode, LossyMatchesMaximalSubparts) {
  EXPECT_EQ(utf8_lossy("a\xF0\x9F\x98"), "a\xEF\xBF\xBD");           // truncated 4-byte: one U+FFFD
  EXPECT_EQ(utf8_lossy("\xC0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD");     // overlong: two
  EXPECT_EQ(utf8_lossy("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate
  EXPECT_TRUE(is_valid_utf8("\xF0\x9F\x98\x80"));
  EXPECT_FALSE(is_valid_utf8("\xF0\x9F\x98"));
}

// --- small hand-built models ----------------------------------------------

std::string tiny_json(const std::string& model_extra, const std::string& added = "[]",
                      const std::string& decoder = "null", const std::string& vocab_extra = "") {
  return R"({"version":"1.0","added_tokens":)" + added + R"(,"normalizer":null,"pre_tokenizer":null,
    "decoder":)" + decoder + R"(,
    "model":{"type":"BPE","vocab":{"<unk>":0,"<0xC3>":1,"<0xA9>":2,"a":3,"b":4,"ab":5," ":6,"c":7,"abc":8)" +
         vocab_extra + R"(},
             "merges":[["a","b"],"ab c"])" + model_extra + "}}";
}

TEST(BpeModel, MergesByRankWithBothMergeFormats) {
  auto tok = Tokenizer::from_json_text(tiny_json(R"(,"unk_token":"<unk>")"), "tiny");
  EXPECT_EQ(tok->encode("abc", true), (std::vector<int32_t>{8}));
  EXPECT_EQ(tok->encode("ab ab", true), (std::vector<int32_t>{5, 6, 5}));
  EXPECT_EQ(tok->encode("ba", true), (std::vector<int32_t>{4, 3}));
}

TEST(BpeModel, ByteFallbackForUnknownCharacters) {
  auto tok = Tokenizer::from_json_text(
      tiny_json(R"(,"unk_token":"<unk>","byte_fallback":true)", "[]",
                R"({"type":"Sequence","decoders":[{"type":"ByteFallback"},{"type":"Fuse"}]})"),
      "tiny");
  EXPECT_EQ(tok->encode("a\xC3\xA9" "b", true), (std::vector<int32_t>{3, 1, 2, 4}));  // aéb
  EXPECT_EQ(tok->decode({3, 1, 2, 4}, false), "a\xC3\xA9" "b");
  // 'z' has no byte tokens in this vocab: unk.
  EXPECT_EQ(tok->encode("zz", true), (std::vector<int32_t>{0, 0}));
}

TEST(BpeModel, FuseUnkCollapsesRuns) {
  auto tok = Tokenizer::from_json_text(tiny_json(R"(,"unk_token":"<unk>","fuse_unk":true)"), "tiny");
  EXPECT_EQ(tok->encode("azzzb", true), (std::vector<int32_t>{3, 0, 4}));
}

TEST(BpeModel, IgnoreMergesPrefersWholeWord) {
  // "abc" would merge to 8 anyway; add "ca" to vocab without a merge path.
  auto with = Tokenizer::from_json_text(tiny_json(R"(,"ignore_merges":true)", "[]", "null", R"(,"ca":9)"), "t");
  auto without = Tokenizer::from_json_text(tiny_json("", "[]", "null", R"(,"ca":9)"), "t");
  EXPECT_EQ(with->encode("ca", true), (std::vector<int32_t>{9}));
  EXPECT_EQ(without->encode("ca", true), (std::vector<int32_t>{7, 3}));
}

const char* kAdded = R"([
  {"id":20,"content":"<sp>","special":true,"lstrip":false,"rstrip":false,"single_word":false,"normalized":false},
  {"id":21,"content":"<sp>x","special":false,"lstrip":false,"rstrip":false,"single_word":false,"normalized":false},
  {"id":22,"content":"[X]","special":false,"lstrip":true,"rstrip":true,"single_word":false,"normalized":false},
  {"id":23,"content":"ab","special":false,"lstrip":false,"rstrip":false,"single_word":true,"normalized":false}])";

TEST(AddedTokens, LongestMatchAndSpecialParsing) {
  auto tok = Tokenizer::from_json_text(tiny_json(R"(,"unk_token":"<unk>")", kAdded), "tiny");
  EXPECT_EQ(tok->encode("a<sp>b", true), (std::vector<int32_t>{3, 20, 4}));
  EXPECT_EQ(tok->encode("<sp>xa", true), (std::vector<int32_t>{21, 3}));  // longest wins
  // parse_special off: the special's text is plain text (unk chars here)...
  EXPECT_EQ(tok->encode("a<sp>b", false), (std::vector<int32_t>{3, 0, 0, 0, 0, 4}));
  // ...and the non-special "[X]" is still matched.
  EXPECT_EQ(tok->encode("a[X]b", false), (std::vector<int32_t>{3, 22, 4}));
  EXPECT_TRUE(tok->is_special(20));
  EXPECT_FALSE(tok->is_special(22));
  EXPECT_EQ(tok->vocab_size(), 24);
  EXPECT_EQ(tok->token_to_id("[X]"), 22);
  EXPECT_EQ(tok->id_to_token(20), "<sp>");
}

TEST(AddedTokens, LstripRstripEatSurroundingWhitespace) {
  auto tok = Tokenizer::from_json_text(tiny_json(R"(,"unk_token":"<unk>")", kAdded), "tiny");
  EXPECT_EQ(tok->encode("a  [X]  b", true), (std::vector<int32_t>{3, 22, 4}));
}

TEST(AddedTokens, SingleWordOnlyMatchesWholeWords) {
  auto tok = Tokenizer::from_json_text(tiny_json(R"(,"unk_token":"<unk>")", kAdded), "tiny");
  // "ab" alone -> added 23; inside "cab" -> BPE ("c","ab" merge -> 7,5).
  EXPECT_EQ(tok->encode("ab cab", true), (std::vector<int32_t>{23, 6, 7, 5}));
}

TEST(AddedTokens, DecodeSkipsSpecialOnRequest) {
  auto tok = Tokenizer::from_json_text(tiny_json(R"(,"unk_token":"<unk>")", kAdded,
                                                 R"({"type":"Fuse"})"),
                                       "tiny");
  EXPECT_EQ(tok->decode({3, 20, 4}, false), "a<sp>b");
  EXPECT_EQ(tok->decode({3, 20, 4}, true), "ab");
}

}  // namespace
}  // namespace reprox::tok
