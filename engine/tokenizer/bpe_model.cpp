#include "engine/tokenizer/bpe_model.hpp"

#include <cstdio>
#include <functional>
#include <queue>
#include <stdexcept>

#include "engine/tokenizer/unicode_utils.hpp"

namespace reprox::tok {

BpeModel::BpeModel(BpeConfig config)
    : fuse_unk_(config.fuse_unk),
      byte_fallback_(config.byte_fallback),
      ignore_merges_(config.ignore_merges),
      prefix_(std::move(config.continuing_subword_prefix)),
      suffix_(std::move(config.end_of_word_suffix)) {
  vocab_.reserve(config.vocab.size() * 2);
  for (auto& [tok, id] : config.vocab) {
    if (id < 0) throw std::runtime_error("tokenizer: negative id in BPE vocab for token '" + tok + "'");
    vocab_[tok] = id;
    if (id > max_id_) max_id_ = id;
  }
  vocab_r_.assign(static_cast<size_t>(max_id_ + 1), nullptr);
  for (const auto& kv : vocab_) vocab_r_[static_cast<size_t>(kv.second)] = &kv.first;

  if (config.unk_token) {
    auto it = vocab_.find(*config.unk_token);
    if (it == vocab_.end())
      throw std::runtime_error("tokenizer: unk_token '" + *config.unk_token + "' is not in the BPE vocab");
    unk_id_ = it->second;
  }
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof(name), "<0x%02X>", b);
    auto it = vocab_.find(name);
    byte_ids_[static_cast<size_t>(b)] = it == vocab_.end() ? -1 : it->second;
  }

  for (const auto& kv : vocab_) {
    size_t i = 0;
    if (kv.first.empty()) continue;
    const char32_t cp = utf8_next(kv.first, i);
    if (i == kv.first.size()) char_ids_.emplace(cp, kv.second);
  }

  merges_.reserve(config.merges.size() * 2);
  uint32_t rank = 0;
  for (const auto& [a, b] : config.merges) {
    auto ia = vocab_.find(a);
    auto ib = vocab_.find(b);
    if (ia == vocab_.end() || ib == vocab_.end())
      throw std::runtime_error("tokenizer: BPE merge '" + a + " " + b + "' uses a token missing from the vocab");
    const std::string merged = a + (b.compare(0, prefix_.size(), prefix_) == 0 ? b.substr(prefix_.size()) : b);
    auto im = vocab_.find(merged);
    if (im == vocab_.end())
      throw std::runtime_error("tokenizer: BPE merge result '" + merged + "' is missing from the vocab");
    merges_.emplace(pair_key(ia->second, ib->second), Merge{rank, im->second});
    ++rank;
  }
}

std::optional<int32_t> BpeModel::token_to_id(std::string_view token) const {
  auto it = vocab_.find(std::string(token));
  if (it == vocab_.end()) return std::nullopt;
  return it->second;
}

const std::string* BpeModel::id_to_token(int32_t id) const {
  if (id < 0 || static_cast<size_t>(id) >= vocab_r_.size()) return nullptr;
  return vocab_r_[static_cast<size_t>(id)];
}

void BpeModel::tokenize(std::string_view word, std::vector<int32_t>& out) const {
  if (word.empty()) return;
  if (ignore_merges_) {
    if (auto id = token_to_id(word)) {
      out.push_back(*id);
      return;
    }
  }
  const bool cacheable = word.size() <= kMaxCachedWordBytes;
  CacheShard* shard = nullptr;
  std::string key;
  if (cacheable) {
    key.assign(word);
    shard = &cache_[std::hash<std::string>{}(key) % kShards];
    std::lock_guard<std::mutex> lock(shard->mu);
    auto it = shard->map.find(key);
    if (it != shard->map.end()) {
      out.insert(out.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  const size_t start = out.size();
  merge_word(word, out);
  if (cacheable) {
    std::vector<int32_t> ids(out.begin() + static_cast<std::ptrdiff_t>(start), out.end());
    std::lock_guard<std::mutex> lock(shard->mu);
    if (shard->map.size() >= kMaxEntriesPerShard) shard->map.clear();
    shard->map.emplace(std::move(key), std::move(ids));
  }
}

void BpeModel::merge_word(std::string_view word, std::vector<int32_t>& out) const {
  struct Symbol {
    int32_t id;
    int32_t prev;
    int32_t next;
    bool alive;
  };
  std::vector<Symbol> syms;
  syms.reserve(word.size());
  bool last_was_unk = false;
  std::string piece;
  size_t i = 0;
  while (i < word.size()) {
    const size_t n = std::min(utf8_len(static_cast<unsigned char>(word[i])), word.size() - i);
    const bool first = i == 0;
    const bool last = i + n >= word.size();
    int32_t char_id = -1;
    if (prefix_.empty() && suffix_.empty()) {
      size_t k = i;
      auto it = char_ids_.find(utf8_next(word, k));
      if (it != char_ids_.end() && k == i + n) char_id = it->second;
    } else {
      piece.clear();
      if (!first) piece += prefix_;
      piece.append(word.data() + i, n);
      if (last) piece += suffix_;
      auto it = vocab_.find(piece);
      if (it != vocab_.end()) char_id = it->second;
    }
    if (char_id >= 0) {
      syms.push_back({char_id, 0, 0, true});
      last_was_unk = false;
    } else {
      bool done = false;
      if (byte_fallback_) {
        bool all = true;
        for (size_t k = 0; k < n; ++k)
          if (byte_ids_[static_cast<unsigned char>(word[i + k])] < 0) all = false;
        if (all) {
          for (size_t k = 0; k < n; ++k) syms.push_back({byte_ids_[static_cast<unsigned char>(word[i + k])], 0, 0, true});
          done = true;
          last_was_unk = false;
        }
      }
      if (!done && unk_id_) {
        if (!(fuse_unk_ && last_was_unk)) syms.push_back({*unk_id_, 0, 0, true});
        last_was_unk = true;
      }
    }
    i += n;
  }
  const auto count = static_cast<int32_t>(syms.size());
  for (int32_t k = 0; k < count; ++k) {
    syms[static_cast<size_t>(k)].prev = k - 1;
    syms[static_cast<size_t>(k)].next = k + 1 < count ? k + 1 : -1;
  }

  // Candidate merges ordered by (rank, position), lowest first, as in HF.
  struct Cand {
    uint32_t rank;
    int32_t pos;
    int32_t new_id;
    bool operator>(const Cand& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
  };
  std::priority_queue<Cand, std::vector<Cand>, std::greater<Cand>> queue;
  auto push_pair = [&](int32_t pos) {
    const int32_t nx = syms[static_cast<size_t>(pos)].next;
    if (nx < 0) return;
    auto it = merges_.find(pair_key(syms[static_cast<size_t>(pos)].id, syms[static_cast<size_t>(nx)].id));
    if (it != merges_.end()) queue.push({it->second.rank, pos, it->second.new_id});
  };
  for (int32_t k = 0; k + 1 < count; ++k) push_pair(k);

  while (!queue.empty()) {
    const Cand top = queue.top();
    queue.pop();
    Symbol& left = syms[static_cast<size_t>(top.pos)];
    if (!left.alive || left.next < 0) continue;
    Symbol& right = syms[static_cast<size_t>(left.next)];
    auto it = merges_.find(pair_key(left.id, right.id));
    if (it == merges_.end() || it->second.new_id != top.new_id) continue;
    left.id = top.new_id;
    right.alive = false;
    left.next = right.next;
    if (right.next >= 0) syms[static_cast<size_t>(right.next)].prev = top.pos;
    if (left.prev >= 0) push_pair(left.prev);
    push_pair(top.pos);
  }
  for (int32_t k = 0; k >= 0 && k < count; k = syms[static_cast<size_t>(k)].next) out.push_back(syms[static_cast<size_t>(k)].id);
}

}  // namespace reprox::tok
