// Appends an unsigned value's low `bytes` bytes, least significant first:
// how guide state keys and identities spell their numbers.
#pragma once

#include <cstdint>
#include <string>

namespace reprox::engine::internal {

inline void append_bytes(std::string* out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i, value >>= 8) out->push_back(static_cast<char>(value & 0xFF));
}

}  // namespace reprox::engine::internal
