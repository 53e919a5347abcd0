#include "engine/runtime/guide_cache.hpp"

#include "engine/sampling/internal/key_bytes.hpp"

namespace reprox::engine {

namespace {

using internal::append_bytes;

// What a guide guides to: equal identities give equal masks in every state.
std::string identity(const GuideSpec& spec, const std::vector<int32_t>& end_ids) {
  std::string key(1, static_cast<char>(spec.kind));
  append_bytes(&key, end_ids.size(), 4);
  for (const int32_t id : end_ids) append_bytes(&key, static_cast<uint32_t>(id), 4);
  if (spec.kind == GuideSpec::Kind::kChoice) {
    for (const auto& choice : spec.choices) {
      append_bytes(&key, choice.size(), 4);
      key += choice;
    }
  }
  if (spec.kind == GuideSpec::Kind::kJsonSchema && spec.schema) spec.schema->append_identity(&key);
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
