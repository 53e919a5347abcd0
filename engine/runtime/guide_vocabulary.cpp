#include "engine/runtime/guide_vocabulary.hpp"

#include <string>
#include <vector>

namespace reprox::engine {

std::shared_ptr<const GuideVocabulary> make_guide_vocabulary(const tok::Tokenizer& tokenizer) {
  std::vector<std::string> after = tokenizer.token_bytes(false);
  std::vector<std::string> first = tokenizer.token_bytes(true);
  for (int32_t id = 0; id < tokenizer.vocab_size(); ++id) {
    if (!tokenizer.is_special(id)) continue;
    after[static_cast<size_t>(id)].clear();
    first[static_cast<size_t>(id)].clear();
  }
  if (first == after) first.clear();  // byte-level tokenizers: no difference
  return std::make_shared<const GuideVocabulary>(std::move(after), std::move(first));
}

}  // namespace reprox::engine
