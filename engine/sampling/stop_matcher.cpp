#include "engine/sampling/stop_matcher.hpp"

#include <algorithm>
#include <utility>

namespace reprox::engine {
namespace {

// Length of the longest suffix of `text` that is a proper prefix of `stop`.
size_t longest_suffix_prefix(std::string_view text, std::string_view stop) {
  const size_t longest = std::min(text.size(), stop.size() - 1);
  for (size_t length = longest; length > 0; --length) {
    if (text.compare(text.size() - length, length, stop, 0, length) == 0) return length;
  }
  return 0;
}

// Length of an incomplete UTF-8 sequence at the end of `text` (0 if the text
// ends on a character boundary or with bytes that no continuation can fix).
size_t incomplete_utf8_tail(std::string_view text) {
  const size_t scan = std::min<size_t>(text.size(), 3);
  for (size_t back = 1; back <= scan; ++back) {
    const auto byte = static_cast<unsigned char>(text[text.size() - back]);
    if ((byte & 0xC0) == 0x80) continue;  // continuation byte: keep looking for the lead
    size_t expected = 1;
    if ((byte & 0xE0) == 0xC0) expected = 2;
    else if ((byte & 0xF0) == 0xE0) expected = 3;
    else if ((byte & 0xF8) == 0xF0) expected = 4;
    return expected > back ? back : 0;
  }
  return 0;
}

}  // namespace

StopMatcher::StopMatcher(std::vector<std::string> stop_strings, bool keep_match) : keep_match_(keep_match) {
  for (auto& stop : stop_strings) {
    if (!stop.empty()) stops_.push_back(std::move(stop));
  }
}

StopMatcher::Output StopMatcher::feed(std::string_view piece, bool may_end) {
  Output output;
  if (stopped() || flushed_) return output;
  held_.append(piece);
  if (!may_end) unarmed_ = held_.size();

  // Earliest-ending match; no match can end inside text already sent.
  size_t best_start = std::string::npos;
  size_t best_end = std::string::npos;
  for (size_t s = 0; s < stops_.size(); ++s) {
    // The first match that ends past the unarmed bytes.
    const size_t from = unarmed_ >= stops_[s].size() ? unarmed_ - stops_[s].size() + 1 : 0;
    const size_t start = held_.find(stops_[s], from);
    if (start == std::string::npos) continue;
    const size_t end = start + stops_[s].size();
    if (end < best_end || (end == best_end && start < best_start)) {
      best_start = start;
      best_end = end;
      stopped_index_ = static_cast<int>(s);
    }
  }
  if (stopped()) {
    output.text = held_.substr(0, keep_match_ ? best_end : best_start);
    output.stopped = true;
    held_.clear();
    return output;
  }

  size_t hold = 0;
  for (const auto& stop : stops_) hold = std::max(hold, longest_suffix_prefix(held_, stop));
  size_t send = held_.size() - hold;
  send -= incomplete_utf8_tail(std::string_view(held_).substr(0, send));
  output.text = held_.substr(0, send);
  held_.erase(0, send);
  unarmed_ -= std::min(unarmed_, send);
  return output;
}

std::string StopMatcher::flush() {
  flushed_ = true;
  std::string rest;
  rest.swap(held_);
  return rest;
}

}  // namespace reprox::engine
