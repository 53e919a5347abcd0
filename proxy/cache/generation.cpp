#include "proxy/cache/generation.hpp"

namespace reprox {

bool Generation::complete() const {
  std::vector<bool> finished(n_choices, false);
  uint32_t count = 0;
  for (const auto& e : events) {
    if (e.finish_reason.empty() || e.choice >= n_choices || finished[e.choice]) continue;
    finished[e.choice] = true;
    ++count;
  }
  return n_choices > 0 && count == n_choices;
}

size_t Generation::byte_size() const {
  size_t bytes = sizeof(*this) + model.size() + system_fingerprint.size();
  for (const auto& e : events)
    bytes += sizeof(e) + e.delta.content.size() + e.delta.extra.size() + e.delta.logprobs.size() +
             e.finish_reason.size();
  return bytes;
}

}  // namespace reprox
