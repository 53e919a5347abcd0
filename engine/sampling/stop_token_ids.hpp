// Token ids that end a generation: the eos ids of generation_config.json
// ("eos_token_id", an int or a list) plus the tokenizer's eos token.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace reprox::engine {

class StopTokenIds {
 public:
  StopTokenIds() = default;
  // Negative ids are dropped; the rest are sorted and deduplicated.
  explicit StopTokenIds(std::vector<int32_t> ids);

  static StopTokenIds from_model(const std::vector<int32_t>& generation_config_eos_ids,
                                 std::optional<int32_t> tokenizer_eos_id);

  bool contains(int32_t id) const;
  const std::vector<int32_t>& ids() const { return ids_; }  // ascending
  bool empty() const { return ids_.empty(); }

 private:
  std::vector<int32_t> ids_;
};

}  // namespace reprox::engine
