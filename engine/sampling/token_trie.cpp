#include "engine/sampling/token_trie.hpp"

#include <algorithm>
#include <limits>

namespace reprox::engine {

namespace {
// Longer tokens (none in real vocabularies) are left out: a guide never allows them.
constexpr size_t kMaxTokenBytes = std::numeric_limits<uint16_t>::max();
}  // namespace

TokenTrie::TokenTrie(const std::vector<std::string>& token_bytes) {
  std::vector<int32_t> order;
  for (size_t id = 0; id < token_bytes.size(); ++id)
    if (!token_bytes[id].empty() && token_bytes[id].size() <= kMaxTokenBytes) order.push_back(static_cast<int32_t>(id));
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    const auto& x = token_bytes[static_cast<size_t>(a)];
    const auto& y = token_bytes[static_cast<size_t>(b)];
    return x != y ? x < y : a < b;
  });
  std::vector<uint32_t> open;  // open[d - 1]: the node at depth d on the current path
  auto close_from = [&](size_t depth) {  // closes the open nodes at depth >= depth
    while (open.size() >= depth && !open.empty()) {
      nodes_[open.back()].subtree_end = static_cast<uint32_t>(nodes_.size());
      open.pop_back();
    }
  };
  const std::string* previous = nullptr;
  for (const int32_t id : order) {
    const std::string& s = token_bytes[static_cast<size_t>(id)];
    if (previous == nullptr || s != *previous) {
      size_t common = 0;
      if (previous != nullptr)
        while (common < s.size() && common < previous->size() && s[common] == (*previous)[common]) ++common;
      for (size_t d = common + 1; d <= s.size(); ++d) {
        close_from(d);
        open.push_back(static_cast<uint32_t>(nodes_.size()));
        const auto at = static_cast<uint32_t>(ids_.size());
        nodes_.push_back(Node{0, at, at, static_cast<uint16_t>(d), static_cast<uint8_t>(s[d - 1])});
      }
      max_depth_ = std::max(max_depth_, s.size());
      previous = &s;
    }
    ids_.push_back(id);  // the last node created ends s
    nodes_.back().ids_end = static_cast<uint32_t>(ids_.size());
  }
  close_from(1);
}

}  // namespace reprox::engine
