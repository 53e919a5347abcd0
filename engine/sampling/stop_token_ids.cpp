#include "engine/sampling/stop_token_ids.hpp"

#include <algorithm>
#include <utility>

namespace reprox::engine {

StopTokenIds::StopTokenIds(std::vector<int32_t> ids) : ids_(std::move(ids)) {
  ids_.erase(std::remove_if(ids_.begin(), ids_.end(), [](int32_t id) { return id < 0; }),
             ids_.end());
  std::sort(ids_.begin(), ids_.end());
  ids_.erase(std::unique(ids_.begin(), ids_.end()), ids_.end());
}

StopTokenIds StopTokenIds::from_model(const std::vector<int32_t>& generation_config_eos_ids,
                                      std::optional<int32_t> tokenizer_eos_id) {
  std::vector<int32_t> ids = generation_config_eos_ids;
  if (tokenizer_eos_id) ids.push_back(*tokenizer_eos_id);
  return StopTokenIds(std::move(ids));
}

bool StopTokenIds::contains(int32_t id) const {
  return std::binary_search(ids_.begin(), ids_.end(), id);
}

}  // namespace reprox::engine
