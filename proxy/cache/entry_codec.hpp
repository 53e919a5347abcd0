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

#include <string>
#include <string_view>

#include "proxy/cache/generation.hpp"

namespace reprox {

enum class CodecError { none, truncated, bad_magic, unknown_version, bad_checksum, malformed, trailing_bytes };

const char* to_string(CodecError error);

constexpr uint8_t kEntryCodecVersion = 1;

std::string encode_generation(const Generation& generation);
// On error `out` is left in an unspecified but valid state.
CodecError decode_generation(std::string_view in, Generation& out);

// The trailer's checksum: CRC-32 as zlib's crc32() computes it.
uint32_t entry_crc32(std::string_view bytes);

}  // namespace reprox
