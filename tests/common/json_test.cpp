// The owned JSON value: parsing edge cases and canonical writing.
#include "common/json.hpp"

#include <gtest/gtest.h>

namespace reprox::json {
namespace {

std::string roundtrip(const std::string& text, bool sort = true) {
  Value v;
  auto err = parse(text, v);
  EXPECT_FALSE(err) << text << ": " << err.message;
  return dump(v, sort);
}

TEST(Json, IntegersPast64BitsReadAsDoublesAsPythonAndJavaScriptDo) {
  // Hugging Face's tokenizer_config.json (Llama 2, TinyLlama) holds this.
  EXPECT_EQ(roundtrip(R"({"model_max_length": 1000000000000000019884624838656})"), R"({"model_max_length":1e+30})");
  EXPECT_EQ(roundtrip(R"([-100000000000000000000000,12,"123456789012345678901234"])"),
            R"([-1e+23,12,"123456789012345678901234"])");
  Value v;
  EXPECT_TRUE(parse("[1e99999999999999999999999]", v));  // beyond double: still an error
  EXPECT_TRUE(parse("[012345678901234567890123]", v));   // a leading zero stays invalid
}

TEST(Json, CanonicalNumbersAndKeys) {
  EXPECT_EQ(roundtrip(R"({"b":1.0,"a":1e0,"c":-0.0,"d":0.1,"e":18446744073709551615})"),
            R"({"a":1,"b":1,"c":0,"d":0.1,"e":18446744073709551615})");
  EXPECT_EQ(roundtrip(R"({"b":1,"a":2})", false), R"({"b":1,"a":2})");
}

TEST(Json, DuplicateKeysLastWins) { EXPECT_EQ(roundtrip(R"({"a":1,"a":2})"), R"({"a":2})"); }

TEST(Json, RejectsInvalidUtf8TrailingJunkAndDeepNesting) {
  Value v;
  EXPECT_TRUE(parse("\"\xff\"", v));
  EXPECT_TRUE(parse("{} x", v));
  EXPECT_TRUE(parse(std::string(100, '[') + std::string(100, ']'), v));
  EXPECT_FALSE(parse(std::string(10, '[') + std::string(10, ']'), v));
}

TEST(Json, StringsAreEscapedAndLossyUtf8IsValid) {
  std::string out;
  write_string(out, std::string("a\"\\\n\x01", 5));
  EXPECT_EQ(out, R"("a\"\\\n\u0001")");
  EXPECT_EQ(utf8_lossy("ok\xe4\xbd"), "ok\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_TRUE(valid_utf8(utf8_lossy("\xff\xfe x \xc3\xa9")));
  EXPECT_EQ(utf8_lossy("caf\xc3\xa9"), "caf\xc3\xa9");
}

// write_string skips eight plain bytes at a time: every byte value, at every
// offset within and across those eight-byte steps, and next to UTF-8 lead
// and continuation bytes, must be escaped exactly as one byte at a time is.
// The reference escapes each byte alone (a string shorter than eight bytes
// never takes the eight-byte steps; the single-byte cases are pinned by
// StringsAreEscapedAndLossyUtf8IsValid).
std::string escaped_one_by_one(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    std::string one;
    write_string(one, std::string_view(&c, 1));
    out += one.substr(1, one.size() - 2);
  }
  out += '"';
  return out;
}

TEST(Json, EveryByteAtEveryOffsetIsEscapedAsOneByOne) {
  // The reference's single bytes, pinned.
  EXPECT_EQ(escaped_one_by_one(std::string("\t\r\b\f\x1f\x7f\xc3\xa9 ~", 10)), R"("\t\r\b\f\u001f)" "\x7f\xc3\xa9 ~\"");
  for (char filler : {'a', '\x80', '\x9f', '\xe4', ' '}) {
    for (int b = 0; b < 256; ++b) {
      for (size_t len : {1, 7, 8, 9, 16, 23}) {
        for (size_t at = 0; at < len; ++at) {
          std::string s(len, filler);
          s[at] = char(b);
          std::string out;
          write_string(out, s);
          ASSERT_EQ(out, escaped_one_by_one(s)) << "byte " << b << " at " << at << " of " << len;
        }
      }
    }
  }
  std::string mixed = "caf\xc3\xa9 \"q\" \\ tab\t\x01\x1f\x7f\xf0\x9f\x98\x80 end of a longer run of text";
  std::string out;
  write_string(out, mixed);
  EXPECT_EQ(out, escaped_one_by_one(mixed));
}

}  // namespace
}  // namespace reprox::json
