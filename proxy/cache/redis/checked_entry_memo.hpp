// The last few Redis entries one thread has checked, by their exact bytes.
//
// A hot key read from Redis again returns the same bytes; checking them
// (checksum, every field's bounds) and rendering them is a pure function of
// those bytes. A lookup that finds the bytes here reuses the checked entry,
// and shares its byte string, so the answer's rendered JSON tail (memoized
// per byte string by the chat handler) is reused too. The Redis round trip,
// the epoch check and the entry's header (stored time, TTL) are untouched:
// a purge or a new value is seen exactly as without the memo. A match is an
// exact comparison of all bytes, never a hash: the checksum is forgeable.
//
// Threading: one instance per thread (thread_local in the Redis store).
// Memory: at most kSlots entries of at most kMaxEntryBytes each.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "proxy/cache/entry_codec.hpp"

namespace reprox {

class CheckedEntryMemo {
 public:
  static constexpr size_t kSlots = 8;
  static constexpr size_t kMaxEntryBytes = 64 * 1024;

  struct Checked {
    std::shared_ptr<const std::string> bytes;  // the whole Redis value
    EncodedGeneration generation;              // opened on (part of) *bytes
    int64_t stored_unix_ms = 0;
  };

  // The entry whose bytes equal `value`, or null.
  const Checked* find(std::string_view value) const;
  // Remembers a checked entry (ignored when too large), evicting the oldest.
  void remember(Checked checked);

 private:
  std::array<Checked, kSlots> slots_;
  size_t next_ = 0;
};

}  // namespace reprox
