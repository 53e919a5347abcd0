#include "engine/model/step_layout.hpp"

#include <algorithm>

namespace reprox::engine {
bool decodes_in_slot(const blocks::Segment& s, const KvArena* arena) {
  return arena != nullptr && s.t == 1 && s.kv->slot && s.kv->slot->arena.get() == arena;
}

StepLayout lay_out_step(const std::vector<blocks::Segment>& segments, const std::vector<int32_t>& ids,
                        const std::vector<int64_t>& logit_rows, const KvArena* arena) {
  StepLayout out;
  const size_t grouped = static_cast<size_t>(std::count_if(
      segments.begin(), segments.end(), [arena](const blocks::Segment& s) { return decodes_in_slot(s, arena); }));
  if (grouped < 2) {
    out.rest = segments;
    out.ids = ids;
    out.logit_rows = logit_rows;
    return out;
  }
  // new_row[old row] for every row, then the segments in their new places.
  std::vector<int64_t> new_row(ids.size());
  out.ids.reserve(ids.size());
  const auto place = [&](const blocks::Segment& s, std::vector<blocks::Segment>& into) {
    blocks::Segment moved = s;
    moved.row = static_cast<int64_t>(out.ids.size());
    for (int64_t j = 0; j < s.t; ++j) {
      new_row[static_cast<size_t>(s.row + j)] = moved.row + j;
      out.ids.push_back(ids[static_cast<size_t>(s.row + j)]);
    }
    into.push_back(moved);
  };
  for (const blocks::Segment& s : segments) {
    if (!decodes_in_slot(s, arena)) continue;
    place(s, out.grouped);
    out.longest_grouped = std::max(out.longest_grouped, s.start + 1);
  }
  for (const blocks::Segment& s : segments) {
    if (!decodes_in_slot(s, arena)) place(s, out.rest);
  }
  out.logit_rows.reserve(logit_rows.size());
  for (const int64_t row : logit_rows) out.logit_rows.push_back(new_row[static_cast<size_t>(row)]);
  return out;
}

}  // namespace reprox::engine
