#include "engine/runtime/guide_cache.hpp"

namespace reprox::engine {

namespace {

void put32(std::string* out, uint32_t v) {
  for (int shift = 0; shift < 32; shift += 8) out->push_back(static_cast<char>((v >> shift) & 0xFF));
}

// What a guide guides to: equal identities give equal masks in every state.
std::string identity(const GuideSpec& spec, const std::vector<int32_t>& end_ids) {
  std::string key(1, static_cast<char>(spec.kind));
  put32(&key, static_cast<uint32_t>(end_ids.size()));
  for (const int32_t id : end_ids) put32(&key, static_cast<uint32_t>(id));
  if (spec.kind == GuideSpec::Kind::kChoice) {
    for (const auto& choice : spec.choices) {
      put32(&key, static_cast<uint32_t>(choice.size()));
      key += choice;
    }
  }
  if (spec.kind == GuideSpec::Kind::kJsonSchema && spec.schema) key += spec.schema->source();
  return key;
}

}  // namespace

std::shared_ptr<const TokenGuide> GuideCache::get(const GuideSpec& spec,
                                                  std::shared_ptr<const GuideVocabulary> vocabulary,
                                                  const std::vector<int32_t>& end_ids) {
  std::string key = identity(spec, end_ids);
  for (auto it = guides_.begin(); it != guides_.end(); ++it)
    if (it->first == key) {
      guides_.splice(guides_.begin(), guides_, it);
      return guides_.front().second;
    }
  auto guide = std::make_shared<const TokenGuide>(spec, std::move(vocabulary), end_ids);
  guides_.emplace_front(std::move(key), guide);
  if (guides_.size() > kMaxGuides) guides_.pop_back();
  return guide;
}

}  // namespace reprox::engine
