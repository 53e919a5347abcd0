// Guided decoding: keeps each choice's text inside a language (one JSON
// object, for JSON mode; one that follows a JSON schema; one string of a
// list, for vLLM's guided_choice) by
// masking, at every step, the tokens whose bytes would leave it.
//
// Contract: a token may be drawn when the text so far plus its bytes still
// begins a word of the language; an id that ends the choice (eos, a stop id)
// may be drawn exactly when the text so far is a whole word, and is then the
// only thing that may (when nothing can extend the word). If no token fits
// (a vocabulary that cannot spell the next byte), the end ids may be drawn.
// The mask is a pure function of the tokens drawn so far, so guided answers
// keep every reproducibility promise of the sampler.
//
// Threading: GuideVocabulary and TokenGuide are immutable apart from
// TokenGuide's mutex-guarded mask cache and GuideVocabulary's atomic count
// of trie walks; a Cursor belongs to one Sampler. Requests asking for the
// same guide may share one TokenGuide (engine/runtime/guide_cache.hpp).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "engine/sampling/choice_machine.hpp"
#include "engine/sampling/json_machine.hpp"
#include "engine/sampling/json_schema.hpp"
#include "engine/sampling/token_trie.hpp"

namespace reprox::engine {

struct GuideSpec {
  enum class Kind { kNone, kJsonObject, kJsonSchema, kChoice };
  Kind kind = Kind::kNone;
  std::vector<std::string> choices;          // kChoice: at least one
  std::shared_ptr<const JsonSchema> schema;  // kJsonSchema: not null
};

// A model's tokens as guides read them. Built once per model.
class GuideVocabulary {
 public:
  // after[id]: the bytes token `id` adds behind other tokens; first[id]: as
  // a completion's first token (empty vector: the same as after). "" marks
  // a token a guide never allows (special tokens, unknown ids).
  GuideVocabulary(std::vector<std::string> after, std::vector<std::string> first);

  int32_t size() const { return static_cast<int32_t>(after_.size()); }
  const std::string& bytes(int32_t id, bool first) const;
  const TokenTrie& trie(bool first) const { return first && first_trie_ ? *first_trie_ : after_trie_; }
  // The most bytes one token adds: masks need keys only this far ahead.
  uint32_t horizon() const { return horizon_; }
  // Masks computed by walking the trie (cache misses), by every guide of
  // this vocabulary so far.
  uint64_t walks() const { return walks_.load(std::memory_order_relaxed); }
  void count_walk() const { walks_.fetch_add(1, std::memory_order_relaxed); }

 private:
  std::vector<std::string> after_, first_;
  TokenTrie after_trie_;
  std::unique_ptr<TokenTrie> first_trie_;  // null when first_ is empty
  uint32_t horizon_ = 1;
  mutable std::atomic<uint64_t> walks_{0};
};

class TokenGuide {
 public:
  // end_ids: the ids that end a choice.
  TokenGuide(const GuideSpec& spec, std::shared_ptr<const GuideVocabulary> vocabulary, std::vector<int32_t> end_ids);

  // One choice's position in the language.
  class Cursor {
   public:
    // Records a drawn (or replayed) token.
    void advance(int32_t token);
    // Sets x[id] = -inf for each id in [0, vocab_size) that may not come next.
    void mask(double* x, int32_t vocab_size) const;

   private:
    friend class TokenGuide;
    using Machine = std::variant<JsonMachine, ChoiceMachine>;
    Cursor(const TokenGuide* guide, Machine machine) : guide_(guide), machine_(std::move(machine)) {}
    const TokenGuide* guide_;
    Machine machine_;
    bool first_ = true;  // no token drawn yet
    bool dead_ = false;  // a token left the language (only end ids remain)
  };
  Cursor start() const;

 private:
  using Bits = std::vector<uint64_t>;
  // The tokens that may follow `cursor`'s state (cached by state).
  std::shared_ptr<const Bits> allowed(const Cursor& cursor) const;
  std::shared_ptr<const Bits> compute(const Cursor& cursor) const;

  static constexpr size_t kMaxCachedStates = 128;  // then the cache starts over
  GuideSpec::Kind kind_;
  std::shared_ptr<const GuideVocabulary> vocabulary_;
  std::vector<int32_t> end_ids_;
  std::optional<ChoiceMachine> choice_start_;  // kChoice
  std::shared_ptr<const JsonSchema> schema_;   // kJsonSchema
  mutable std::mutex mutex_;
  mutable std::unordered_map<std::string, std::shared_ptr<const Bits>> cache_;
};

}  // namespace reprox::engine
