// The compact, versioned binary form of a Generation, as the Redis tier
// stores it.
//
// Layout (version 1):
//   "RPXG" | version (1 byte) | body | crc32 (4 bytes, little endian, over
//   everything before it)
//   body: str model, str system_fingerprint, str ns, varint n_choices,
//         svarint created_unix_ms, svarint prompt/completion/cached tokens,
//         varint event count, then per event: varint choice, str content,
//         str extra, str logprobs, str finish_reason
//   str = varint byte length + bytes; varint = LEB128; svarint = zigzag.
//
// The decoder treats its input as untrusted: it never reads past the end,
// never allocates more than the input could describe, and reports why it
// rejected the input instead of throwing.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "common/generation.hpp"

namespace reprox {

enum class CodecError { none, truncated, bad_magic, unknown_version, bad_checksum, malformed, trailing_bytes };

const char* to_string(CodecError error);

constexpr uint8_t kEntryCodecVersion = 1;

std::string encode_generation(const Generation& generation);
// On error `out` is left in an unspecified but valid state.
CodecError decode_generation(std::string_view in, Generation& out);

// An encoded generation read in place. open() checks all of it (magic,
// version, checksum, every field's bounds, each event's choice) without
// building anything; then the header fields are at hand, the events can be
// walked as views, and decode() cannot fail. A Redis hit that answers a
// non-stream request renders from the views and never decodes. Holds views
// into the bytes given to open(), which must outlive it; copies share them.
class EncodedGeneration {
 public:
  // On error, leaves this empty (no events, n_choices 0).
  CodecError open(std::string_view bytes);

  std::string_view model() const { return model_; }
  std::string_view system_fingerprint() const { return fingerprint_; }
  std::string_view ns() const { return ns_; }
  uint32_t n_choices() const { return n_choices_; }
  int64_t created_unix_ms() const { return created_unix_ms_; }
  const Usage& usage() const { return usage_; }
  uint64_t n_events() const { return n_events_; }
  // As Generation::complete(): every choice has a finish_reason.
  bool complete() const { return complete_; }

  // Calls `fn` for each event, in stream order (after a successful open()).
  void for_each_event(const std::function<void(const EventView&)>& fn) const;
  Generation decode() const;

 private:
  CodecError parse(std::string_view bytes);

  std::string_view model_, fingerprint_, ns_;
  std::string_view events_;  // the encoded events, n_events_ of them
  uint32_t n_choices_ = 0;
  int64_t created_unix_ms_ = 0;
  Usage usage_;
  uint64_t n_events_ = 0;
  bool complete_ = false;
};

// The trailer's checksum: CRC-32 as zlib's crc32() computes it.
uint32_t entry_crc32(std::string_view bytes);

}  // namespace reprox
