#include "engine/kv/internal/prefix_tree.hpp"

#include <algorithm>

namespace reprox::engine::kv::internal {

PrefixTree::PrefixTree(int32_t block_size, BlockPool* pool) : block_size_(block_size), pool_(pool) {}

PrefixTree::~PrefixTree() = default;

std::vector<int32_t> PrefixTree::block_key(const int32_t* tokens) const {
  return std::vector<int32_t>(tokens, tokens + block_size_);
}

Tenant* PrefixTree::find_tenant(const std::string& salt) const {
  auto it = tenants_.find(salt);
  return it == tenants_.end() ? nullptr : it->second.get();
}

void PrefixTree::index_leaf(Node* node) {
  LeafKey key{node->last_access, node->serial};
  leaves_[key] = node;
  node->tenant->leaves[key] = node;
}

void PrefixTree::unindex_leaf(Node* node) {
  LeafKey key{node->last_access, node->serial};
  leaves_.erase(key);
  node->tenant->leaves.erase(key);
}

void PrefixTree::touch(Node* node) {
  const uint64_t now = ++clock_;
  if (node->is_leaf()) {
    unindex_leaf(node);
    node->last_access = now;
    index_leaf(node);
    node = node->parent;
  }
  for (; node != nullptr; node = node->parent) node->last_access = now;
}

Node* PrefixTree::new_child(Node* parent, std::vector<int32_t> tokens, std::vector<BlockId> blocks) {
  if (parent->is_leaf()) unindex_leaf(parent);
  auto child = std::make_unique<Node>();
  child->tokens = std::move(tokens);
  child->blocks = std::move(blocks);
  child->parent = parent;
  child->tenant = parent->tenant;
  child->last_access = clock_;
  child->serial = next_serial_++;
  Node* raw = child.get();
  parent->children[block_key(raw->tokens.data())] = std::move(child);
  index_leaf(raw);
  return raw;
}

Node* PrefixTree::split(Node* node, size_t keep_blocks) {
  Node* parent = node->parent;
  const size_t keep_tokens = keep_blocks * static_cast<size_t>(block_size_);
  auto slot = parent->children.find(block_key(node->tokens.data()));
  std::unique_ptr<Node> lower = std::move(slot->second);

  auto upper = std::make_unique<Node>();
  upper->tokens.assign(node->tokens.begin(), node->tokens.begin() + static_cast<std::ptrdiff_t>(keep_tokens));
  upper->blocks.assign(node->blocks.begin(), node->blocks.begin() + static_cast<std::ptrdiff_t>(keep_blocks));
  upper->parent = parent;
  upper->tenant = node->tenant;
  upper->last_access = node->last_access;
  upper->serial = next_serial_++;
  Node* raw_upper = upper.get();

  node->tokens.erase(node->tokens.begin(), node->tokens.begin() + static_cast<std::ptrdiff_t>(keep_tokens));
  node->blocks.erase(node->blocks.begin(), node->blocks.begin() + static_cast<std::ptrdiff_t>(keep_blocks));
  node->parent = raw_upper;
  raw_upper->children[block_key(node->tokens.data())] = std::move(lower);
  slot->second = std::move(upper);  // same key: the upper part starts with the same block
  return raw_upper;
}

std::vector<BlockId> PrefixTree::match(const std::string& tenant_salt, const int32_t* tokens, size_t max_blocks) {
  std::vector<BlockId> out;
  Tenant* tenant = find_tenant(tenant_salt);
  if (tenant == nullptr) return out;
  const size_t bs = static_cast<size_t>(block_size_);
  Node* cur = &tenant->root;
  Node* deepest = nullptr;
  size_t i = 0;
  while (i < max_blocks) {
    auto it = cur->children.find(block_key(tokens + i * bs));
    if (it == cur->children.end()) break;
    Node* child = it->second.get();
    const size_t n = child->blocks.size();
    size_t j = 1;  // the key matched the first block
    while (j < n && i + j < max_blocks &&
           std::equal(tokens + (i + j) * bs, tokens + (i + j + 1) * bs, child->tokens.begin() + static_cast<std::ptrdiff_t>(j * bs)))
      ++j;
    out.insert(out.end(), child->blocks.begin(), child->blocks.begin() + static_cast<std::ptrdiff_t>(j));
    deepest = child;
    i += j;
    if (j < n) break;
    cur = child;
  }
  if (deepest != nullptr) touch(deepest);
  return out;
}

TreeInsert PrefixTree::insert(const std::string& tenant_salt, const int32_t* tokens, const BlockId* blocks,
                              size_t n_blocks) {
  TreeInsert result;
  if (n_blocks == 0) return result;
  auto& slot = tenants_[tenant_salt];
  if (!slot) {
    slot = std::make_unique<Tenant>();
    slot->salt = tenant_salt;
    slot->root.tenant = slot.get();
  }
  Tenant* tenant = slot.get();
  const size_t bs = static_cast<size_t>(block_size_);
  ++clock_;
  Node* cur = &tenant->root;
  size_t i = 0;
  while (i < n_blocks) {
    auto it = cur->children.find(block_key(tokens + i * bs));
    if (it == cur->children.end()) {
      // New positions: adopt the caller's blocks while they are adoptable.
      size_t k = i;
      while (k < n_blocks && pool_->valid(blocks[k]) && pool_->refcount(blocks[k]) > 0 && !pool_->cached(blocks[k]) &&
             std::find(blocks + i, blocks + k, blocks[k]) == blocks + k)
        ++k;
      if (k == i) break;
      Node* leaf = new_child(cur, std::vector<int32_t>(tokens + i * bs, tokens + k * bs),
                             std::vector<BlockId>(blocks + i, blocks + k));
      for (size_t b = i; b < k; ++b) pool_->set_cached(blocks[b], true);
      cached_blocks_ += static_cast<int32_t>(k - i);
      result.adopted_blocks = static_cast<int32_t>(k - i);
      cur = leaf;
      break;
    }
    Node* child = it->second.get();
    const size_t n = child->blocks.size();
    size_t j = 1;
    while (j < n && i + j < n_blocks &&
           std::equal(tokens + (i + j) * bs, tokens + (i + j + 1) * bs, child->tokens.begin() + static_cast<std::ptrdiff_t>(j * bs)))
      ++j;
    i += j;
    if (j < n) {
      if (i == n_blocks) {  // the sequence ends inside this edge: nothing new
        cur = child;
        break;
      }
      cur = split(child, j);  // diverges inside the edge
      continue;
    }
    cur = child;
  }
  if (!cur->is_root()) {
    touch(cur);
    result.leaf = cur;
  }
  if (tenant->root.children.empty()) tenants_.erase(tenant_salt);
  return result;
}

int32_t PrefixTree::remove_leaf(Node* leaf) {
  unindex_leaf(leaf);
  const int32_t removed = static_cast<int32_t>(leaf->blocks.size());
  for (BlockId b : leaf->blocks) pool_->set_cached(b, false);
  cached_blocks_ -= removed;
  Node* parent = leaf->parent;
  Tenant* tenant = leaf->tenant;
  parent->children.erase(block_key(leaf->tokens.data()));  // destroys leaf
  if (parent->is_leaf()) index_leaf(parent);
  if (tenant->root.children.empty()) tenants_.erase(tenant->salt);
  return removed;
}

bool PrefixTree::evictable(const Node& leaf) const {
  for (BlockId b : leaf.blocks)
    if (pool_->refcount(b) != 0) return false;
  return true;
}

int32_t PrefixTree::trailing_unreferenced(const Node& node) const {
  int32_t n = 0;
  for (auto it = node.blocks.rbegin(); it != node.blocks.rend() && pool_->refcount(*it) == 0; ++it) ++n;
  return n;
}

Node* PrefixTree::oldest_trimmable_leaf() const {
  for (const auto& [key, node] : leaves_)
    if (trailing_unreferenced(*node) > 0) return node;
  return nullptr;
}

int32_t PrefixTree::trim_leaf(Node* leaf) {
  const int32_t n = trailing_unreferenced(*leaf);
  if (n == static_cast<int32_t>(leaf->blocks.size())) return remove_leaf(leaf);
  for (int32_t i = 0; i < n; ++i) {
    pool_->set_cached(leaf->blocks.back(), false);
    leaf->blocks.pop_back();
  }
  leaf->tokens.resize(leaf->blocks.size() * static_cast<size_t>(block_size_));
  cached_blocks_ -= n;
  return n;
}

Node* PrefixTree::oldest_evictable_leaf_of(const Tenant& tenant, const Node* skip) const {
  for (const auto& [key, node] : tenant.leaves)
    if (node != skip && evictable(*node)) return node;
  return nullptr;
}

int32_t PrefixTree::evictable_blocks_below(const Node& node, bool* all_evictable) const {
  int32_t count = 0;
  bool children_all = true;
  for (const auto& [key, child] : node.children) {
    bool child_all = false;
    count += evictable_blocks_below(*child, &child_all);
    children_all = children_all && child_all;
  }
  bool all = children_all;
  if (!node.is_root()) {
    // Once every descendant is gone this node is a leaf, and its unheld tail goes too.
    const int32_t tail = children_all ? trailing_unreferenced(node) : 0;
    count += tail;
    all = children_all && tail == static_cast<int32_t>(node.blocks.size());
  }
  *all_evictable = all;
  return count;
}

int32_t PrefixTree::evictable_blocks() const {
  int32_t count = 0;
  for (const auto& [salt, tenant] : tenants_) {
    bool all = false;
    count += evictable_blocks_below(tenant->root, &all);
  }
  return count;
}

}  // namespace reprox::engine::kv::internal
