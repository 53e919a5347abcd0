// The radix tree (compressed trie) behind KvCacheManager. Internal: use
// KvCacheManager.
//
// Every tenant has its own root; nodes are never shared across tenants. Edges
// hold whole blocks only: a node's `tokens` is a non-empty multiple of
// block_size long and `blocks[i]` holds the KV of tokens
// [i*block_size, (i+1)*block_size) of that edge. Children are keyed by their
// first block's tokens, so siblings always differ within their first block
// and edges split only at block boundaries.
//
// Leaves are indexed by (last_access, serial) globally and per tenant, so the
// least recently used leaf is found without a scan. last_access comes from a
// logical clock, so eviction order is repeatable.
//
// The tree marks the blocks it owns as cached in the pool; it never changes
// reference counts.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/kv/block_pool.hpp"

namespace reprox::engine::kv::internal {

struct Tenant;

struct Node {
  std::vector<int32_t> tokens;  // a multiple of block_size; empty only at a root
  std::vector<BlockId> blocks;  // tokens.size() / block_size
  Node* parent = nullptr;
  Tenant* tenant = nullptr;
  std::map<std::vector<int32_t>, std::unique_ptr<Node>> children;  // key: first block's tokens
  uint64_t last_access = 0;
  uint64_t serial = 0;
  bool is_root() const { return parent == nullptr; }
  bool is_leaf() const { return parent != nullptr && children.empty(); }
};

using LeafKey = std::pair<uint64_t, uint64_t>;  // (last_access, serial)

struct Tenant {
  std::string salt;
  Node root;
  std::map<LeafKey, Node*> leaves;  // this tenant's conversations, oldest first
};

struct TreeInsert {
  int32_t adopted_blocks = 0;  // request blocks the tree now owns
  Node* leaf = nullptr;        // the node holding the inserted sequence's last block
};

class PrefixTree {
 public:
  PrefixTree(int32_t block_size, BlockPool* pool);
  ~PrefixTree();
  PrefixTree(const PrefixTree&) = delete;
  PrefixTree& operator=(const PrefixTree&) = delete;

  // Blocks of the longest prefix of tokens[0, max_blocks * block_size) present
  // under `tenant`, in whole blocks. Touches the matched path (LRU).
  std::vector<BlockId> match(const std::string& tenant, const int32_t* tokens, size_t max_blocks);

  // Adds the first n_blocks full blocks of `tokens`, whose KV is in blocks[0,
  // n_blocks). Positions the tree already has keep the tree's block; for new
  // positions the tree adopts the caller's block. Adoption stops at a block
  // that is invalid, not held (refcount 0) or already cached.
  TreeInsert insert(const std::string& tenant, const int32_t* tokens, const BlockId* blocks, size_t n_blocks);

  // Removes a leaf; its blocks are uncached (freed when nobody holds them).
  // Returns the number of blocks removed. Drops a tenant left empty.
  int32_t remove_leaf(Node* leaf);

  // Removes the trailing blocks of a leaf that nobody holds (the whole leaf
  // if none is held); returns how many. A request holding a prefix of an
  // edge so keeps only what it uses.
  int32_t trim_leaf(Node* leaf);
  // The least recently used leaf whose last block nobody holds; nullptr if none.
  Node* oldest_trimmable_leaf() const;

  // A leaf none of whose blocks is held, oldest first; nullptr if none.
  // `skip` is never returned.
  Node* oldest_evictable_leaf_of(const Tenant& tenant, const Node* skip = nullptr) const;
  bool evictable(const Node& leaf) const;

  // Cached blocks that trimming leaves could free now: exactly what repeated
  // trim_leaf(oldest_trimmable_leaf()) would free. O(nodes).
  int32_t evictable_blocks() const;

  Tenant* find_tenant(const std::string& salt) const;
  int32_t cached_blocks() const { return cached_blocks_; }

 private:
  Node* new_child(Node* parent, std::vector<int32_t> tokens, std::vector<BlockId> blocks);
  Node* split(Node* node, size_t keep_blocks);  // returns the new upper node
  void touch(Node* node);
  void index_leaf(Node* node);
  void unindex_leaf(Node* node);
  std::vector<int32_t> block_key(const int32_t* tokens) const;
  int32_t evictable_blocks_below(const Node& node, bool* all_evictable) const;
  int32_t trailing_unreferenced(const Node& node) const;

  int32_t block_size_;
  BlockPool* pool_;
  uint64_t clock_ = 0;
  uint64_t next_serial_ = 1;
  int32_t cached_blocks_ = 0;
  std::map<std::string, std::unique_ptr<Tenant>> tenants_;
  std::map<LeafKey, Node*> leaves_;  // all tenants, oldest first
};

}  // namespace reprox::engine::kv::internal
