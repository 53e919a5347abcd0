#include "proxy/cache/entry_codec.hpp"

#include <gtest/gtest.h>

#include <random>

#include "proxy/api/chat_response.hpp"

#include "tests/proxy/cache/redis/test_util.hpp"

namespace reprox {
namespace {

TEST(EntryCodec, ChecksumIsStandardCrc32) {
  EXPECT_EQ(entry_crc32(""), 0x00000000u);
  EXPECT_EQ(entry_crc32("123456789"), 0xCBF43926u);  // the CRC-32 check value
  EXPECT_EQ(entry_crc32("The quick brown fox jumps over the lazy dog"), 0x414FA339u);
  // Every length around the 8-byte stride agrees with the bit-by-bit form.
  auto bitwise = [](const std::string& d) {
    uint32_t c = 0xFFFFFFFFu;
    for (unsigned char b : d) {
      c ^= b;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    }
    return c ^ 0xFFFFFFFFu;
  };
  std::string data;
  for (int i = 0; i < 41; ++i) {
    EXPECT_EQ(entry_crc32(data), bitwise(data)) << "length " << data.size();
    data.push_back(char(i * 37 + 11));
  }
}

TEST(EntryCodec, RoundTripsEveryField) {
  auto g = testing::sample_generation("round trip", 3);
  g->usage = Usage{-1, INT64_MAX, INT64_MIN};
  g->created_unix_ms = -5;
  std::string bytes = encode_generation(*g);
  EXPECT_EQ(bytes.substr(0, 4), "RPXG");
  EXPECT_EQ(uint8_t(bytes[4]), kEntryCodecVersion);
  Generation out;
  ASSERT_EQ(decode_generation(bytes, out), CodecError::none);
  testing::expect_same_generation(*g, out);
}

TEST(EntryCodec, EmptyGenerationRoundTrips) {
  Generation g, out;
  ASSERT_EQ(decode_generation(encode_generation(g), out), CodecError::none);
  EXPECT_TRUE(out.events.empty());
  EXPECT_EQ(out.n_choices, 1u);
}

TEST(EntryCodec, EncodingIsCompact) {
  auto g = testing::sample_generation("compact", 1);
  size_t payload = 0;
  for (const auto& e : g->events)
    payload += e.delta.content.size() + e.delta.extra.size() + e.delta.logprobs.size() + e.finish_reason.size();
  payload += g->model.size() + g->system_fingerprint.size() + g->ns.size();
  EXPECT_LE(encode_generation(*g).size(), payload + 60);
}

TEST(EntryCodec, RejectsEveryTruncation) {
  std::string bytes = encode_generation(*testing::sample_generation("truncate me", 2));
  for (size_t n = 0; n < bytes.size(); ++n) {
    Generation out;
    EXPECT_NE(decode_generation(std::string_view(bytes.data(), n), out), CodecError::none) << n;
  }
}

TEST(EntryCodec, RejectsRandomBitFlips) {
  std::string bytes = encode_generation(*testing::sample_generation("flip", 2));
  std::mt19937 rng(1234);
  for (int trial = 0; trial < 5000; ++trial) {
    std::string bad = bytes;
    int flips = 1 + int(rng() % 3);
    for (int f = 0; f < flips; ++f) bad[rng() % bad.size()] ^= char(1u << (rng() % 8));
    if (bad == bytes) continue;
    Generation out;
    EXPECT_NE(decode_generation(bad, out), CodecError::none) << trial;
  }
}

TEST(EntryCodec, RandomGarbageNeverCrashes) {
  std::mt19937 rng(99);
  for (int trial = 0; trial < 5000; ++trial) {
    std::string junk(rng() % 64, '\0');
    for (auto& c : junk) c = char(rng());
    if (trial % 2) junk = "RPXG\x01" + junk;  // past the magic, into the body
    Generation out;
    EXPECT_NE(decode_generation(junk, out), CodecError::none);
  }
}

TEST(EntryCodec, NamesWhatIsWrong) {
  std::string bytes = encode_generation(*testing::sample_generation("x", 1));
  Generation out;
  std::string bad_magic = bytes;
  bad_magic[0] = 'X';
  EXPECT_EQ(decode_generation(bad_magic, out), CodecError::bad_magic);
  std::string future = bytes;
  future[4] = char(kEntryCodecVersion + 1);
  EXPECT_EQ(decode_generation(future, out), CodecError::unknown_version);
  EXPECT_EQ(decode_generation(bytes.substr(0, 3), out), CodecError::truncated);
  std::string flipped = bytes;
  flipped[10] ^= 1;
  EXPECT_EQ(decode_generation(flipped, out), CodecError::bad_checksum);
}

// Bodies with a valid checksum but lying contents: the decoder must rely on
// bounds, not on the checksum.
std::string with_checksum(std::string body) {
  std::string framed = "RPXG" + std::string(1, char(kEntryCodecVersion)) + body;
  // CRC-32 (IEEE), computed here independently of the codec.
  uint32_t c = 0xFFFFFFFFu;
  for (unsigned char b : framed) {
    c ^= b;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
  }
  c ^= 0xFFFFFFFFu;
  for (int i = 0; i < 4; ++i) framed.push_back(char(uint8_t(c >> (8 * i))));
  return framed;
}

TEST(EntryCodec, RejectsLyingLengthsWithValidChecksum) {
  Generation out;
  // model length 2^62: far past the end.
  EXPECT_EQ(decode_generation(with_checksum("\x80\x80\x80\x80\x80\x80\x80\x80\x40"), out), CodecError::truncated);
  // 11-byte varint: malformed.
  EXPECT_EQ(decode_generation(with_checksum(std::string(11, '\xff')), out), CodecError::malformed);
  // Three empty strings, n_choices 1, zeros, then 2^40 events in a tiny body.
  std::string body("\0\0\0\x01\0\0\0\0\x80\x80\x80\x80\x80\x20", 14);
  EXPECT_EQ(decode_generation(with_checksum(body), out), CodecError::truncated);
  // An event naming choice 5 of 1.
  std::string bad_choice("\0\0\0\x01\0\0\0\0\x01\x05\0\0\0\0", 14);
  EXPECT_EQ(decode_generation(with_checksum(bad_choice), out), CodecError::malformed);
  // A valid body followed by junk.
  std::string trailing("\0\0\0\x01\0\0\0\0\x00\x07", 10);
  EXPECT_EQ(decode_generation(with_checksum(trailing), out), CodecError::trailing_bytes);
  std::string fine("\0\0\0\x01\0\0\0\0\x00", 9);
  EXPECT_EQ(decode_generation(with_checksum(fine), out), CodecError::none);
}

// EncodedGeneration reads in place what decode builds: the Redis tier
// answers non-stream hits from these views without decoding.
TEST(EncodedGeneration, ReadsInPlaceWhatDecodeBuilds) {
  auto g = testing::sample_generation("in place", 3);
  std::string bytes = encode_generation(*g);
  EncodedGeneration e;
  ASSERT_EQ(e.open(bytes), CodecError::none);
  EXPECT_EQ(e.model(), g->model);
  EXPECT_EQ(e.system_fingerprint(), g->system_fingerprint);
  EXPECT_EQ(e.ns(), g->ns);
  EXPECT_EQ(e.n_choices(), 3u);
  EXPECT_EQ(e.created_unix_ms(), g->created_unix_ms);
  EXPECT_EQ(e.usage().prompt_tokens, g->usage.prompt_tokens);
  EXPECT_EQ(e.usage().completion_tokens, g->usage.completion_tokens);
  EXPECT_EQ(e.usage().cached_tokens, g->usage.cached_tokens);
  ASSERT_EQ(e.n_events(), g->events.size());
  size_t i = 0;
  e.for_each_event([&](const EventView& v) {
    ASSERT_LT(i, g->events.size());
    const GenEvent& want = g->events[i++];
    EXPECT_EQ(v.choice, want.choice);
    EXPECT_EQ(v.content, want.delta.content);
    EXPECT_EQ(v.extra, want.delta.extra);
    EXPECT_EQ(v.logprobs, want.delta.logprobs);
    EXPECT_EQ(v.finish_reason, want.finish_reason);
  });
  EXPECT_EQ(i, g->events.size());
  EXPECT_TRUE(e.complete());
  testing::expect_same_generation(*g, e.decode());
}

TEST(EncodedGeneration, CompleteAgreesWithTheGeneration) {
  auto g = testing::sample_generation("unfinished", 2);
  g->events.back().finish_reason.clear();  // choice 1 never finishes
  g->events.push_back(GenEvent{0, Delta{"again", "", ""}, "stop"});  // choice 0 finishes twice
  ASSERT_FALSE(g->complete());
  EncodedGeneration e;
  ASSERT_EQ(e.open(encode_generation(*g)), CodecError::none);
  EXPECT_FALSE(e.complete());
  g->events.push_back(GenEvent{1, Delta{}, "length"});
  ASSERT_TRUE(g->complete());
  std::string bytes = encode_generation(*g);
  ASSERT_EQ(e.open(bytes), CodecError::none);
  EXPECT_TRUE(e.complete());
  EXPECT_FALSE(EncodedGeneration().complete());
}

TEST(EncodedGeneration, OpenRejectsWhatDecodeRejects) {
  std::string bytes = encode_generation(*testing::sample_generation("reject", 2));
  EncodedGeneration e;
  for (size_t n = 0; n < bytes.size(); ++n) EXPECT_NE(e.open(std::string_view(bytes.data(), n)), CodecError::none) << n;
  std::string flipped = bytes;
  flipped[flipped.size() / 2] ^= 0x10;
  EXPECT_EQ(e.open(flipped), CodecError::bad_checksum);
  EXPECT_EQ(e.n_events(), 0u);  // a failed open leaves nothing to walk
  // Past the checksum, a bad event: the header had been read, and is dropped.
  ASSERT_EQ(e.open(bytes), CodecError::none);
  std::string bad_choice("\0\0\0\x01\0\0\0\0\x02\0\0\0\0\0\x05\0\0\0\0", 19);
  EXPECT_EQ(e.open(with_checksum(bad_choice)), CodecError::malformed);
  EXPECT_EQ(e.n_events(), 0u);
  EXPECT_EQ(e.n_choices(), 0u);
  size_t walked = 0;
  e.for_each_event([&](const EventView&) { ++walked; });
  EXPECT_EQ(walked, 0u);
}

// The non-stream tail rendered from an entry's bytes is the tail rendered
// from the decoded generation, byte for byte: content, logprobs, merged
// tool_calls, finish reasons and usage, for one and several choices.
TEST(EncodedGeneration, TailFromTheBytesIsTheTailFromTheGeneration) {
  auto with_tools = testing::sample_generation("tools", 2);
  with_tools->events.insert(with_tools->events.begin() + 1,
                            GenEvent{0, Delta{"", "\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"a\\\"\"}}]", ""}, ""});
  with_tools->events.insert(with_tools->events.begin() + 2,
                            GenEvent{0, Delta{"", "\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\":1}\"}}]", ""}, ""});
  auto plain = testing::sample_generation("plain", 1);
  for (auto& e : plain->events) e.delta.logprobs.clear();
  for (const auto& g : {testing::sample_generation("one", 1), testing::sample_generation("three", 3), with_tools, plain}) {
    std::string bytes = encode_generation(*g);
    EncodedGeneration e;
    ASSERT_EQ(e.open(bytes), CodecError::none);
    auto walk = [&e](const std::function<void(const EventView&)>& fn) { e.for_each_event(fn); };
    std::string from_bytes = api::render_completion_tail(e.n_choices(), e.usage(), walk);
    EXPECT_EQ(from_bytes, api::render_completion_tail(*g));
    EXPECT_NE(from_bytes.find("\"usage\""), std::string::npos);
  }
}

}  // namespace
}  // namespace reprox
