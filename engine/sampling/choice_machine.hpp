// A byte-at-a-time recognizer of one string out of a fixed list (vLLM's
// guided_choice): feed() answers whether the bytes so far begin one of them.
//
// A ChoiceMachine is a small value pointing into a shared, immutable list:
// copy it to try a continuation. Not thread-safe; copies are independent.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace reprox::engine {

class ChoiceMachine {
 public:
  // `choices` must not be empty; order and repeats do not matter.
  explicit ChoiceMachine(std::vector<std::string> choices);

  bool feed(uint8_t byte);
  bool feed(std::string_view bytes);
  // The bytes so far equal a choice. (Another may still extend them.)
  bool complete() const;
  // Nothing may follow: the bytes so far are a choice and no choice is longer.
  bool finished() const;
  // Appends a byte string that identifies this state (`horizon` is
  // JsonMachine's; a choice's key never needs it).
  void append_key(std::string* out, uint32_t horizon = UINT32_MAX) const;

 private:
  std::shared_ptr<const std::vector<std::string>> choices_;  // sorted, unique
  // choices_[lo_, hi_) are those that begin with the pos_ bytes so far.
  uint32_t lo_ = 0, hi_ = 0, pos_ = 0;
};

}  // namespace reprox::engine
