#include "engine/tokenizer/bpe_model.hpp"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <queue>
#include <stdexcept>

#include "engine/tokenizer/unicode_utils.hpp"

namespace reprox::tok {

namespace {

// One symbol of a word being merged. The symbols form a doubly linked list
// over a vector (prev/next are indices, -1 at the ends), so a merge unlinks
// its right-hand symbol in O(1) and marks it dead.
struct Symbol {
  int32_t id;
  int32_t prev;
  int32_t next;
  bool alive;
};

// The parts of a BpeModel that split a word into its initial symbols.
struct CharSplitter {
  const std::unordered_map<std::string, int32_t>& vocab;
  const std::unordered_map<char32_t, int32_t>& char_ids;
  const std::array<int32_t, 256>& byte_ids;
  const std::string& prefix;
  const std::string& suffix;
  const std::optional<int32_t>& unk_id;
  bool byte_fallback;
  bool fuse_unk;

  // One symbol per UTF-8 character of `word` that is in the vocab (with the
  // continuing-subword prefix on all but the first character and the
  // end-of-word suffix on the last). Any other character becomes its
  // <0xXX> byte tokens when byte_fallback has them all, else unk (a run of
  // them a single unk when fuse_unk), else nothing. Links are left unset.
  std::vector<Symbol> split(std::string_view word) const {
    std::vector<Symbol> syms;
    syms.reserve(word.size());
    bool last_was_unk = false;
    std::string piece;
    size_t i = 0;
    while (i < word.size()) {
      const size_t n = std::min(utf8_len(static_cast<unsigned char>(word[i])), word.size() - i);
      const int32_t id = char_id(word, i, n, piece);
      if (id >= 0) {
        syms.push_back({id, 0, 0, true});
        last_was_unk = false;
      } else {
        push_unknown(word.substr(i, n), syms, last_was_unk);
      }
      i += n;
    }
    return syms;
  }

  // The vocab id of the character word[i, i + n) at its place in the word,
  // or -1. `piece` is scratch space.
  int32_t char_id(std::string_view word, size_t i, size_t n, std::string& piece) const {
    if (prefix.empty() && suffix.empty()) {
      size_t k = i;
      auto it = char_ids.find(utf8_next(word, k));
      return it != char_ids.end() && k == i + n ? it->second : -1;
    }
    piece.clear();
    if (i != 0) piece += prefix;
    piece.append(word.data() + i, n);
    if (i + n >= word.size()) piece += suffix;
    auto it = vocab.find(piece);
    return it != vocab.end() ? it->second : -1;
  }

  // A character (its UTF-8 bytes) that has no vocab entry.
  void push_unknown(std::string_view bytes, std::vector<Symbol>& syms, bool& last_was_unk) const {
    auto byte_id = [this](char b) { return byte_ids[static_cast<unsigned char>(b)]; };
    if (byte_fallback && std::all_of(bytes.begin(), bytes.end(), [&](char b) { return byte_id(b) >= 0; })) {
      for (char b : bytes) syms.push_back({byte_id(b), 0, 0, true});
      last_was_unk = false;
      return;
    }
    if (unk_id) {
      if (!(fuse_unk && last_was_unk)) syms.push_back({*unk_id, 0, 0, true});
      last_was_unk = true;
    }
  }
};

// Links the symbols into a list in vector order.
void link(std::vector<Symbol>& syms) {
  const auto count = static_cast<int32_t>(syms.size());
  for (int32_t k = 0; k < count; ++k) {
    syms[static_cast<size_t>(k)].prev = k - 1;
    syms[static_cast<size_t>(k)].next = k + 1 < count ? k + 1 : -1;
  }
}

// A queued merge: the symbol at `pos` and its right neighbour become new_id.
struct Cand {
  uint32_t rank;
  int32_t pos;
  int32_t new_id;
  bool operator>(const Cand& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
};

// Merges the linked symbols by (rank, position), lowest first, as HF does,
// until no adjacent pair has a merge. find_merge(left_id, right_id) returns
// the pair's merge (with rank and new_id) or nullptr. A queued candidate is
// skipped when its left symbol has died or its pair has changed since.
template <typename FindMerge>
void apply_merges(std::vector<Symbol>& syms, const FindMerge& find_merge) {
  std::priority_queue<Cand, std::vector<Cand>, std::greater<Cand>> queue;
  auto push_pair = [&](int32_t pos) {
    const int32_t nx = syms[static_cast<size_t>(pos)].next;
    if (nx < 0) return;
    if (const auto* m = find_merge(syms[static_cast<size_t>(pos)].id, syms[static_cast<size_t>(nx)].id))
      queue.push({m->rank, pos, m->new_id});
  };
  for (int32_t k = 0; k + 1 < static_cast<int32_t>(syms.size()); ++k) push_pair(k);

  while (!queue.empty()) {
    const Cand top = queue.top();
    queue.pop();
    Symbol& left = syms[static_cast<size_t>(top.pos)];
    if (!left.alive || left.next < 0) continue;
    Symbol& right = syms[static_cast<size_t>(left.next)];
    const auto* m = find_merge(left.id, right.id);
    if (!m || m->new_id != top.new_id) continue;
    left.id = top.new_id;
    right.alive = false;
    left.next = right.next;
    if (right.next >= 0) syms[static_cast<size_t>(right.next)].prev = top.pos;
    if (left.prev >= 0) push_pair(left.prev);
    push_pair(top.pos);
  }
}

}  // namespace

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
  if (short_words_.find(word, out) || long_words_.find(word, out)) return;
  const size_t start = out.size();
  merge_word(word, out);
  const int32_t* ids = out.data() + start;
  const size_t n = out.size() - start;
  if (!short_words_.put(word, ids, n)) long_words_.put(word, ids, n);
}

void BpeModel::merge_word(std::string_view word, std::vector<int32_t>& out) const {
  const CharSplitter splitter{vocab_, char_ids_, byte_ids_, prefix_, suffix_, unk_id_, byte_fallback_, fuse_unk_};
  std::vector<Symbol> syms = splitter.split(word);
  link(syms);
  apply_merges(syms, [this](int32_t a, int32_t b) -> const Merge* {
    auto it = merges_.find(pair_key(a, b));
    return it == merges_.end() ? nullptr : &it->second;
  });
  const auto count = static_cast<int32_t>(syms.size());
  for (int32_t k = 0; k >= 0 && k < count; k = syms[static_cast<size_t>(k)].next) out.push_back(syms[static_cast<size_t>(k)].id);
}

}  // namespace reprox::tok
