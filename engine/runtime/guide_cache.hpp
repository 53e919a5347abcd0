// The guides of recent requests, by what they guide to (JSON mode, one
// schema, one list of choices, with the same end ids), so that requests
// asking for the same share one TokenGuide and so its mask cache: a state's
// mask is walked once per guide, not once per request. A mask is a pure
// function of the state, so sharing never changes an answer.
//
// Bound: kMaxGuides guides; the least recently used goes (requests still
// running keep theirs alive). Threading: the engine thread only.
#pragma once

#include <cstddef>
#include <list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/sampling/token_guide.hpp"

namespace reprox::engine {

class GuideCache {
 public:
  static constexpr size_t kMaxGuides = 8;

  // The guide for `spec` and `end_ids`, shared with earlier requests that
  // asked for the same.
  std::shared_ptr<const TokenGuide> get(const GuideSpec& spec, std::shared_ptr<const GuideVocabulary> vocabulary,
                                        const std::vector<int32_t>& end_ids);

 private:
  std::list<std::pair<std::string, std::shared_ptr<const TokenGuide>>> guides_;  // most recent first
};

}  // namespace reprox::engine
