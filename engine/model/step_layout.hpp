#pragma once
// The row order of one fast-mode step. The single decode rows of caches in
// one arena's slots (at least two of them) go first, in their segments'
// order: they attend as one group (blocks::DecodeGroup). The other segments
// (prompts, and decode rows of caches that are not in a slot) follow in
// their order and attend one by one. Fewer than two such rows: the step
// keeps its order and everything attends per segment.
#include <cstdint>
#include <vector>

#include "engine/model/forward_blocks.hpp"

namespace reprox::engine {

struct StepLayout {
  std::vector<blocks::Segment> grouped;  // rows 0 .. grouped.size()-1, one each
  std::vector<blocks::Segment> rest;     // rows after them, each segment's rows together
  std::vector<int32_t> ids;              // token ids in the new row order
  std::vector<int64_t> logit_rows;       // the step's logit rows, renumbered, in the order given
  int64_t longest_grouped = 0;           // the longest grouped sequence, its new token included
};

// Whether `s` is a single decode row of a cache in `arena`'s slots (null
// arena: never): the rows a DecodeGroup takes.
bool decodes_in_slot(const blocks::Segment& s, const KvArena* arena);

// segments: rows back to back in x (Segment::row); ids: their token ids;
// logit_rows: rows whose logits are wanted. arena may be null (no group).
StepLayout lay_out_step(const std::vector<blocks::Segment>& segments, const std::vector<int32_t>& ids,
                        const std::vector<int64_t>& logit_rows, const KvArena* arena);

}  // namespace reprox::engine
