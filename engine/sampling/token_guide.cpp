#include "engine/sampling/token_guide.hpp"

#include <algorithm>
#include <limits>
#include <utility>

namespace reprox::engine {

namespace {

constexpr double kBanned = -std::numeric_limits<double>::infinity();

bool bit_set(const std::vector<uint64_t>& bits, int32_t id) { return (bits[static_cast<size_t>(id) >> 6] >> (id & 63)) & 1u; }
void set_bit(std::vector<uint64_t>& bits, int32_t id) { bits[static_cast<size_t>(id) >> 6] |= uint64_t{1} << (id & 63); }
void clear_bit(std::vector<uint64_t>& bits, int32_t id) { bits[static_cast<size_t>(id) >> 6] &= ~(uint64_t{1} << (id & 63)); }

bool guide_complete(const JsonMachine& m) { return m.complete(); }
bool guide_complete(const ChoiceMachine& m) { return m.complete(); }
bool guide_finished(const JsonMachine& m) { return m.complete(); }
bool guide_finished(const ChoiceMachine& m) { return m.finished(); }

}  // namespace

GuideVocabulary::GuideVocabulary(std::vector<std::string> after, std::vector<std::string> first)
    : after_(std::move(after)), first_(std::move(first)), after_trie_(after_) {
  if (!first_.empty()) {
    first_.resize(after_.size());
    first_trie_ = std::make_unique<TokenTrie>(first_);
  }
  const size_t longest = std::max(after_trie_.max_depth(), first_trie_ ? first_trie_->max_depth() : 0);
  horizon_ = static_cast<uint32_t>(std::max<size_t>(longest, 1));
}

const std::string& GuideVocabulary::bytes(int32_t id, bool first) const {
  return first && !first_.empty() ? first_[static_cast<size_t>(id)] : after_[static_cast<size_t>(id)];
}

TokenGuide::TokenGuide(const GuideSpec& spec, std::shared_ptr<const GuideVocabulary> vocabulary,
                       std::vector<int32_t> end_ids)
    : kind_(spec.kind), vocabulary_(std::move(vocabulary)), end_ids_(std::move(end_ids)) {
  if (kind_ == GuideSpec::Kind::kChoice) choice_start_.emplace(spec.choices);
  if (kind_ == GuideSpec::Kind::kJsonSchema) schema_ = spec.schema;
}

TokenGuide::Cursor TokenGuide::start() const {
  if (choice_start_) return Cursor(this, *choice_start_);
  return Cursor(this, JsonMachine(schema_.get()));
}

void TokenGuide::Cursor::advance(int32_t token) {
  const bool was_first = first_;
  first_ = false;
  if (dead_) return;
  if (token < 0 || token >= guide_->vocabulary_->size()) {
    dead_ = true;
    return;
  }
  const std::string& bytes = guide_->vocabulary_->bytes(token, was_first);
  dead_ = bytes.empty() || !std::visit([&](auto& m) { return m.feed(bytes); }, machine_);
}

void TokenGuide::Cursor::mask(double* x, int32_t vocab_size) const {
  const std::shared_ptr<const Bits> bits = guide_->allowed(*this);
  const int32_t known = std::min(vocab_size, guide_->vocabulary_->size());
  for (int32_t id = 0; id < known; ++id)
    if (!bit_set(*bits, id)) x[id] = kBanned;
  for (int32_t id = known; id < vocab_size; ++id) x[id] = kBanned;
}

std::shared_ptr<const TokenGuide::Bits> TokenGuide::allowed(const Cursor& cursor) const {
  std::string key(1, static_cast<char>(cursor.dead_ ? 2 : cursor.first_ ? 1 : 0));
  // A mask looks one token ahead, so states that agree that far share it.
  if (!cursor.dead_) std::visit([&](const auto& m) { m.append_key(&key, vocabulary_->horizon()); }, cursor.machine_);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  }
  auto bits = compute(cursor);
  std::lock_guard<std::mutex> lock(mutex_);
  if (cache_.size() >= kMaxCachedStates) cache_.clear();
  cache_.emplace(std::move(key), bits);
  return bits;
}

std::shared_ptr<const TokenGuide::Bits> TokenGuide::compute(const Cursor& cursor) const {
  const int32_t size = vocabulary_->size();
  auto bits = std::make_shared<Bits>((static_cast<size_t>(size) + 63) / 64, 0);
  vocabulary_->count_walk();
  bool may_end = true;
  if (!cursor.dead_) {
    std::visit(
        [&](const auto& m) {
          may_end = guide_complete(m);
          if (!guide_finished(m)) vocabulary_->trie(cursor.first_).walk(m, [&](int32_t id) { set_bit(*bits, id); });
        },
        cursor.machine_);
  }
  // The end ids follow the rule above, whatever their bytes.
  for (const int32_t id : end_ids_)
    if (id >= 0 && id < size) clear_bit(*bits, id);
  const bool none = std::all_of(bits->begin(), bits->end(), [](uint64_t w) { return w == 0; });
  if (may_end || none)
    for (const int32_t id : end_ids_)
      if (id >= 0 && id < size) set_bit(*bits, id);
  return bits;
}

}  // namespace reprox::engine
