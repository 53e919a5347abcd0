// The vocabulary as a byte trie, for guided decoding: walk() finds every
// token whose bytes a recognizer (JsonMachine, ChoiceMachine) accepts in
// full, pruning a whole subtree at the first byte it refuses.
//
// Nodes are stored in preorder, each with the index just past its subtree,
// so a walk is one forward pass over an array. Immutable after
// construction; walk() is const and may run on many threads.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace reprox::engine {

class TokenTrie {
 public:
  // token_bytes[id]: the bytes token `id` adds; "" for a token a guide never
  // allows (special tokens, unknown ids).
  explicit TokenTrie(const std::vector<std::string>& token_bytes);

  // Calls allow(id) for each token whose bytes `start` accepts, in trie order.
  // Machine: copyable, with bool feed(uint8_t).
  template <class Machine, class Allow>
  void walk(const Machine& start, Allow&& allow) const {
    std::vector<Machine> states(max_depth_ + 1, start);  // states[d]: after the node at depth d
    for (size_t k = 0; k < nodes_.size();) {
      const Node& n = nodes_[k];
      Machine& m = states[n.depth];
      m = states[n.depth - 1];
      if (!m.feed(n.byte)) {
        k = n.subtree_end;
        continue;
      }
      for (uint32_t i = n.ids_begin; i < n.ids_end; ++i) allow(ids_[i]);
      ++k;
    }
  }

  size_t node_count() const { return nodes_.size(); }
  size_t max_depth() const { return max_depth_; }  // the longest token, in bytes

 private:
  struct Node {
    uint32_t subtree_end;  // index of the first node after this one's subtree
    uint32_t ids_begin, ids_end;  // tokens whose bytes end here: ids_[begin, end)
    uint16_t depth;        // 1 for a first byte
    uint8_t byte;
  };
  std::vector<Node> nodes_;
  std::vector<int32_t> ids_;
  size_t max_depth_ = 0;
};

}  // namespace reprox::engine
