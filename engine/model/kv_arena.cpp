#include "engine/model/kv_arena.hpp"

#include <torch/types.h>

namespace reprox::engine {

KvSlot::~KvSlot() {
  if (arena) arena->release(index, used);
}

std::shared_ptr<KvArena> KvArena::create(int64_t layers, int64_t slots, int64_t n_kv, int64_t tokens,
                                         int64_t head_dim, const torch::TensorOptions& options) {
  std::shared_ptr<KvArena> arena(new KvArena());
  c10::InferenceMode guard;
  for (int64_t l = 0; l < layers; ++l) {
    arena->k_.push_back(torch::zeros({slots + 1, n_kv, tokens, head_dim}, options));
    arena->v_.push_back(torch::zeros({slots + 1, n_kv, tokens, head_dim}, options));
  }
  arena->tokens_ = tokens;
  arena->scratch_ = slots;
  for (int64_t s = slots - 1; s >= 0; --s) arena->free_.push_back(s);
  return arena;
}

std::shared_ptr<KvSlot> KvArena::acquire() {
  std::lock_guard lock(mutex_);
  if (free_.empty()) return nullptr;
  auto slot = std::make_shared<KvSlot>();
  slot->arena = shared_from_this();
  slot->index = free_.back();
  free_.pop_back();
  return slot;
}

size_t KvArena::free_slots() const {
  std::lock_guard lock(mutex_);
  return free_.size();
}

void KvArena::release(int64_t index, int64_t used) {
  if (used > 0) {
    c10::InferenceMode guard;
    for (size_t l = 0; l < k_.size(); ++l) {
      k_[l].select(0, index).narrow(1, 0, std::min(used, tokens_)).zero_();
      v_[l].select(0, index).narrow(1, 0, std::min(used, tokens_)).zero_();
    }
  }
  std::lock_guard lock(mutex_);
  free_.push_back(index);
}

}  // namespace reprox::engine
