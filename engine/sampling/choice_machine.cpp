#include "engine/sampling/choice_machine.hpp"

#include <algorithm>

namespace reprox::engine {

ChoiceMachine::ChoiceMachine(std::vector<std::string> choices) {
  std::sort(choices.begin(), choices.end());
  choices.erase(std::unique(choices.begin(), choices.end()), choices.end());
  hi_ = static_cast<uint32_t>(choices.size());
  choices_ = std::make_shared<const std::vector<std::string>>(std::move(choices));
}

bool ChoiceMachine::feed(std::string_view bytes) {
  for (const char c : bytes)
    if (!feed(static_cast<uint8_t>(c))) return false;
  return true;
}

bool ChoiceMachine::feed(uint8_t byte) {
  // The range is sorted and shares its first pos_ bytes, so the choices whose
  // next byte is `byte` are contiguous; a choice that ends at pos_ sorts first.
  const auto& c = *choices_;
  uint32_t lo = lo_;
  while (lo < hi_ && (c[lo].size() <= pos_ || static_cast<uint8_t>(c[lo][pos_]) < byte)) ++lo;
  uint32_t hi = lo;
  while (hi < hi_ && static_cast<uint8_t>(c[hi][pos_]) == byte) ++hi;
  if (lo == hi) return false;
  lo_ = lo;
  hi_ = hi;
  ++pos_;
  return true;
}

bool ChoiceMachine::complete() const { return lo_ < hi_ && (*choices_)[lo_].size() == pos_; }

bool ChoiceMachine::finished() const { return complete() && hi_ - lo_ == 1; }

void ChoiceMachine::append_key(std::string* out) const {
  const uint32_t fields[] = {lo_, hi_, pos_};
  out->append(reinterpret_cast<const char*>(fields), sizeof(fields));
}

}  // namespace reprox::engine
