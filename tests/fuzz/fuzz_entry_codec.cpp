// Fuzz target: the Redis entry codec. The first input byte picks a mode:
// even, the rest is an entry as read from Redis; odd, the rest is an entry
// body ("RPXG", the version and the fields) to which a correct CRC-32 is
// appended, so the field decoding is reached.
// Properties: a corrupt entry is rejected with a CodecError (a cache miss),
// never a crash or an allocation beyond what the input describes;
// decode_generation and EncodedGeneration::open agree; when decoding
// succeeds, the encoding of the result decodes to the same generation, and
// the in-place views match the decoded events.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "proxy/cache/entry_codec.hpp"
#include "tests/fuzz/fuzz_check.hpp"

namespace {

using reprox::CodecError;
using reprox::Generation;

bool same(const Generation& a, const Generation& b) {
  if (a.model != b.model || a.system_fingerprint != b.system_fingerprint || a.ns != b.ns ||
      a.n_choices != b.n_choices || a.created_unix_ms != b.created_unix_ms ||
      a.usage.prompt_tokens != b.usage.prompt_tokens || a.usage.completion_tokens != b.usage.completion_tokens ||
      a.usage.cached_tokens != b.usage.cached_tokens || a.events.size() != b.events.size())
    return false;
  for (size_t i = 0; i < a.events.size(); ++i) {
    const auto &x = a.events[i], &y = b.events[i];
    if (x.choice != y.choice || x.delta.content != y.delta.content || x.delta.extra != y.delta.extra ||
        x.delta.logprobs != y.delta.logprobs || x.finish_reason != y.finish_reason)
      return false;
  }
  return true;
}

void check(std::string_view entry) {
  Generation decoded;
  const CodecError error = reprox::decode_generation(entry, decoded);
  reprox::EncodedGeneration encoded;
  const CodecError open_error = encoded.open(entry);
  FUZZ_CHECK(error == open_error, "decode_generation and EncodedGeneration::open agree");
  if (error != CodecError::none) {
    FUZZ_CHECK(encoded.n_events() == 0 && encoded.n_choices() == 0, "a failed open leaves the view empty");
    return;
  }
  FUZZ_CHECK(same(encoded.decode(), decoded), "the in-place view decodes to the same generation");
  size_t i = 0;
  encoded.for_each_event([&](const reprox::EventView& e) {
    FUZZ_CHECK(i < decoded.events.size(), "the views walk the decoded events");
    const auto& d = decoded.events[i++];
    FUZZ_CHECK(e.choice == d.choice && e.content == d.delta.content && e.finish_reason == d.finish_reason,
               "each view matches its decoded event");
  });
  FUZZ_CHECK(i == decoded.events.size(), "the views walk every event");
  FUZZ_CHECK(encoded.complete() == decoded.complete(), "complete() agrees");
  Generation again;
  FUZZ_CHECK(reprox::decode_generation(reprox::encode_generation(decoded), again) == CodecError::none,
             "a re-encoded entry decodes");
  FUZZ_CHECK(same(again, decoded), "encode(decode(x)) round-trips");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string entry(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] % 2 == 1) {
    const uint32_t crc = reprox::entry_crc32(entry);
    for (int i = 0; i < 4; ++i) entry.push_back(static_cast<char>((crc >> (8 * i)) & 0xff));
  }
  check(entry);
  return 0;
}
