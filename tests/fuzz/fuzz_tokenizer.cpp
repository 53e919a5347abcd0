// Fuzz target: the default model's tokenizer (Qwen3's tokenizer.json, the
// one make-tiny-model copies), loaded once. The first input byte picks a
// mode:
//   even: the rest is text. For valid UTF-8, decode(encode(text)) equals
//         the NFC form of the text (the tokenizer's normalizer is NFC), with
//         and without special-token parsing; any bytes encode without
//         crashing.
//   odd:  the rest is a sequence of 24-bit little-endian ids taken modulo
//         the vocabulary size (plus a few out of range). Decoding never crashes, and the
//         StreamDecoder fed id by id, then flushed, gives exactly the whole
//         decode, with and without skipping special tokens.
// The tokenizer directory comes from REPROX_FUZZ_TOKENIZER_DIR in the
// environment, else from the compiled-in fixture path.
#include <utf8proc.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/tokenizer/tokenizer.hpp"
#include "tests/fuzz/fuzz_check.hpp"

namespace {

std::shared_ptr<const reprox::tok::Tokenizer> g_tokenizer;

std::string nfc(std::string_view text) {
  utf8proc_uint8_t* out = utf8proc_NFC(reinterpret_cast<const utf8proc_uint8_t*>(std::string(text).c_str()));
  if (!out) return {};
  std::string s(reinterpret_cast<char*>(out));
  std::free(out);
  return s;
}

bool valid_utf8_without_nul(std::string_view text) {
  utf8proc_ssize_t pos = 0;
  while (pos < static_cast<utf8proc_ssize_t>(text.size())) {
    utf8proc_int32_t cp;
    const auto n = utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(text.data()) + pos,
                                    static_cast<utf8proc_ssize_t>(text.size()) - pos, &cp);
    if (n <= 0 || cp == 0) return false;
    pos += n;
  }
  return true;
}

void check_text(std::string_view text) {
  const auto& tok = *g_tokenizer;
  const auto plain = tok.encode(text, false);
  const auto special = tok.encode(text, true);
  if (!valid_utf8_without_nul(text)) return;
  const std::string expected = nfc(text);
  FUZZ_CHECK(tok.decode(plain, false) == expected, "decode(encode(text)) is NFC(text)");
  FUZZ_CHECK(tok.decode(special, false) == expected, "decode(encode(text, parse_special)) is NFC(text)");
}

std::string stream_decode(const std::vector<int32_t>& ids, bool skip_special) {
  reprox::tok::StreamDecoder stream(g_tokenizer, skip_special);
  std::string text;
  for (int32_t id : ids) text += stream.push(id);
  return text + stream.flush();
}

void check_ids(std::string_view bytes) {
  const auto& tok = *g_tokenizer;
  const int32_t vocab = tok.vocab_size();
  std::vector<int32_t> ids;
  for (size_t i = 0; i + 2 < bytes.size() && ids.size() < 256; i += 3) {
    const auto byte = [&](size_t k) { return static_cast<int32_t>(static_cast<uint8_t>(bytes[i + k])); };
    const int32_t raw = byte(0) | byte(1) << 8 | byte(2) << 16;
    // 0xFFFFFF and 0xFFFFFE stand for ids out of range (unknown ids are skipped).
    ids.push_back(raw == 0xFFFFFF ? -1 : raw == 0xFFFFFE ? vocab : raw % vocab);
  }
  for (bool skip : {false, true}) {
    const std::string whole = tok.decode(ids, skip);
    FUZZ_CHECK(stream_decode(ids, skip) == whole, "streamed decode equals the whole decode");
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* dir = std::getenv("REPROX_FUZZ_TOKENIZER_DIR");
  const std::string path = dir && *dir ? dir : REPROX_FUZZ_TOKENIZER_DIR;
  try {
    g_tokenizer = reprox::tok::Tokenizer::load_dir(path);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz_tokenizer: cannot load the tokenizer from %s: %s\n"
                 "(run tests/setup_npm.sh or set REPROX_FUZZ_TOKENIZER_DIR)\n", path.c_str(), e.what());
    std::exit(1);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0 || size > 4096) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] % 2 == 0)
    check_text(rest);
  else
    check_ids(rest);
  return 0;
}
