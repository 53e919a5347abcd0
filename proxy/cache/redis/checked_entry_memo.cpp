#include "proxy/cache/redis/checked_entry_memo.hpp"

#include <algorithm>
#include <cstring>

namespace reprox {

const CheckedEntryMemo::Checked* CheckedEntryMemo::find(std::string_view value) const {
  for (const auto& slot : slots_) {
    if (!slot.bytes || slot.bytes->size() != value.size()) continue;
    // The checksum trailer differs first between most entries of one size.
    size_t tail = std::min<size_t>(value.size(), 4);
    if (std::memcmp(slot.bytes->data() + value.size() - tail, value.data() + value.size() - tail, tail) != 0) continue;
    if (std::memcmp(slot.bytes->data(), value.data(), value.size()) == 0) return &slot;
  }
  return nullptr;
}

void CheckedEntryMemo::remember(Checked checked) {
  if (!checked.bytes || checked.bytes->size() > kMaxEntryBytes) return;
  slots_[next_] = std::move(checked);
  next_ = (next_ + 1) % kSlots;
}

}  // namespace reprox
