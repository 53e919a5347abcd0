#include "engine/sampling/choice_machine.hpp"

#include <algorithm>

#include "engine/sampling/internal/sorted_prefix.hpp"

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
  const auto [lo, hi] = internal::narrow_by_byte(*choices_, lo_, hi_, pos_, byte, internal::itself);
  if (lo == hi) return false;
  lo_ = lo;
  hi_ = hi;
  ++pos_;
  return true;
}

bool ChoiceMachine::complete() const { return lo_ < hi_ && (*choices_)[lo_].size() == pos_; }

bool ChoiceMachine::finished() const { return complete() && hi_ - lo_ == 1; }

void ChoiceMachine::append_key(std::string* out, uint32_t /*horizon*/) const {
  const uint32_t fields[] = {lo_, hi_, pos_};
  out->append(reinterpret_cast<const char*>(fields), sizeof(fields));
}

}  // namespace reprox::engine
