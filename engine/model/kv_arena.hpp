#pragma once
// Fast mode's KV slots: for each layer one tensor [slots, Nkv, tokens, D] on
// the model device, so that the decode rows of many sequences write their
// keys and values with one operation and gather them for attention with
// another (on a GPU, a handful of kernel launches a layer whatever the
// batch, against six per sequence with caches of their own).
//
// A sequence's KvCache is a slot: its k[l], v[l] are views of slot `index`.
// Free slots are all zeros, so the positions of a slot past its sequence's
// length hold finite values, which attention over a padded batch needs (a
// zero probability times a finite value is zero).
//
// Threading: acquire() and the release of a slot are safe from any thread;
// the tensors are used by the thread running the model.
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include <torch/types.h>

namespace reprox::engine {

class KvArena;

// One taken slot; returned to its arena (zeroed up to `used`) when the last
// holder drops it.
struct KvSlot {
  std::shared_ptr<KvArena> arena;
  int64_t index = 0;
  int64_t used = 0;  // positions ever written: [0, used) may be non-zero
  ~KvSlot();
};

class KvArena : public std::enable_shared_from_this<KvArena> {
 public:
  // Zeros: per layer k and v [slots + 1, n_kv, tokens, head_dim] in
  // `options`. The last slot is never handed out: rows that only pad a
  // batch to a fixed size write there (scratch()).
  static std::shared_ptr<KvArena> create(int64_t layers, int64_t slots, int64_t n_kv, int64_t tokens,
                                         int64_t head_dim, const torch::TensorOptions& options);

  // A free slot, or nullptr when every slot is taken.
  std::shared_ptr<KvSlot> acquire();

  const torch::Tensor& k(size_t layer) const { return k_[layer]; }  // [slots, Nkv, tokens, D]
  const torch::Tensor& v(size_t layer) const { return v_[layer]; }
  int64_t tokens() const { return tokens_; }
  int64_t scratch() const { return scratch_; }
  size_t free_slots() const;

 private:
  KvArena() = default;
  friend struct KvSlot;
  void release(int64_t index, int64_t used);

  std::vector<torch::Tensor> k_, v_;
  int64_t tokens_ = 0;
  int64_t scratch_ = 0;
  mutable std::mutex mutex_;
  std::vector<int64_t> free_;  // guarded by mutex_
};

}  // namespace reprox::engine
