// A cache hit's generation as its tier handed it over: the memory tier's
// decoded object, or a Redis entry's checked bytes, decoded only when first
// asked for. A non-stream answer renders from the bytes (encoded()) and
// never decodes; streams, the tiered store's L1 fill, single-flight replay
// and the auditor ask for the decoded generation.
//
// Threading: the lazy decode is unsynchronized. A StoredGeneration (and
// every copy of it) belongs to one thread at a time, as a Lookup does.
#pragma once

#include <memory>
#include <string>
#include <type_traits>

#include "proxy/cache/entry_codec.hpp"
#include "common/generation.hpp"

namespace reprox {

class StoredGeneration {
 public:
  StoredGeneration() = default;
  // Implicit: a decoded generation is a stored one.
  template <typename G, typename = std::enable_if_t<std::is_convertible_v<G*, const Generation*>>>
  StoredGeneration(std::shared_ptr<G> decoded) : decoded_(std::move(decoded)) {}  // NOLINT
  // `opened` is an EncodedGeneration that the caller opened on (part of)
  // `bytes`, which this keeps alive for its views.
  StoredGeneration(std::shared_ptr<const std::string> bytes, const EncodedGeneration& opened)
      : bytes_(std::move(bytes)), encoded_(opened) {}

  explicit operator bool() const { return decoded_ || bytes_; }
  // The decoded generation; decodes the bytes on the first call.
  const std::shared_ptr<const Generation>& shared() const;
  const Generation& operator*() const { return *shared(); }
  const Generation* operator->() const { return shared().get(); }
  // The encoded form, when the tier handed over bytes; null otherwise.
  const EncodedGeneration* encoded() const { return bytes_ ? &encoded_ : nullptr; }
  // The bytes encoded() views (null when none): hits of one Redis entry on
  // one thread share them (CheckedEntryMemo), so they can key a memo.
  const std::shared_ptr<const std::string>& bytes() const { return bytes_; }
  // Whether the decoded generation exists yet (tests: nothing decodes needlessly).
  bool decoded() const { return decoded_ != nullptr; }

 private:
  mutable std::shared_ptr<const Generation> decoded_;
  std::shared_ptr<const std::string> bytes_;  // owns what encoded_ views
  EncodedGeneration encoded_;
};

}  // namespace reprox
