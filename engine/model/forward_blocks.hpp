#pragma once
// One transformer block per architecture family and numeric mode. Each takes
// the residual stream x [T, H] of the tokens at positions start..start+T-1,
// writes their keys/values into the layer's cache (k_cache, v_cache
// [n_kv_heads, capacity, head_dim], capacity >= start + T) and returns the
// new residual stream [T, H]. The batched blocks take several sequences at once.
#include <cstdint>
#include <vector>

#include <torch/types.h>

#include "engine/model/model.hpp"
#include "engine/model/model_config.hpp"
#include "engine/model/fast_weights.hpp"
#include "engine/model/kv_arena.hpp"
#include "engine/model/model_weights.hpp"

namespace reprox::engine::blocks {

// A batched call runs several sequences at once: x [R, H] holds the rows of
// every segment back to back. Norms, projections and the MLP run over all R
// rows (one pass over the weights for the whole batch); RoPE, the cache
// writes and attention run per segment, each on its own KvCache.
struct Segment {
  int64_t row = 0;         // its first row in x
  int64_t t = 0;           // its rows (tokens)
  int64_t start = 0;       // position of its first token
  KvCache* kv = nullptr;   // capacity >= start + t; layer i's K/V are kv->k[i], kv->v[i]
  torch::Tensor cos, sin;  // strict mode's RoPE tables of its positions (llama family):
                           // [t, D/2] fp32 (strict_ops::rope_tables)
};

// The single decode rows of caches in the slots of one arena, at least two
// of them, as the first B rows of a fast step (step_layout.hpp): their keys
// and values are written, and attended to, with one set of operations for
// all of them (kv_arena.hpp); the step's other segments attend one by one.
// Built once per step.
struct DecodeGroup {
  const KvArena* arena = nullptr;  // null: attention per segment
  torch::Tensor slots;             // [B] long: row b's slot (B: the group's rows)
  torch::Tensor pos;               // [B] long: the position of row b's token
  torch::Tensor future;            // [B, 1, 1, L] bool: the key positions after row b's (masked out)
  int64_t len = 0;                 // L: the group's longest sequence, new tokens included
};

// fast: libtorch's kernels (ops.hpp) on fast_weights.hpp's fused layout,
// any dtype and device, over the rows of all segments. cos/sin [R, 1, D]:
// the RoPE table rows of every row's position. A row's result is close to,
// but not bitwise, what it gets in another batch (libtorch's kernels may
// round differently for another number of rows); the same segments give the
// same bits run to run.
torch::Tensor llama_fast_batch(const ModelConfig& c, const FastLayer& l, const torch::Tensor& x,
                               const torch::Tensor& cos, const torch::Tensor& sin,
                               const std::vector<Segment>& segments, const DecodeGroup& group, size_t layer);
torch::Tensor gpt2_fast_batch(const ModelConfig& c, const FastLayer& l, const torch::Tensor& x,
                              const std::vector<Segment>& segments, const DecodeGroup& group, size_t layer);

// strict: reprox::kernels (strict_ops.hpp), fp32 CPU only; bitwise the same
// for a token whatever the other tokens of the call, the other sequences of
// the batch and the cache capacity.
torch::Tensor llama_strict(const ModelConfig& c, const LayerWeights& l, const torch::Tensor& x,
                           const std::vector<Segment>& segments, size_t layer);
torch::Tensor gpt2_strict(const ModelConfig& c, const LayerWeights& l, const torch::Tensor& x,
                          const std::vector<Segment>& segments, size_t layer);

}  // namespace reprox::engine::blocks
