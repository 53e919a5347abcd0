// The tokenizer's view that guided decoding needs: each token's exact bytes,
// behind other tokens and as a completion's first token, special tokens
// left out (a guide never draws them: eos ends a choice by its own rule).
// Seconds for a 150k vocabulary, so the engine builds it on first use.
#pragma once

#include <memory>

#include "engine/sampling/token_guide.hpp"
#include "engine/tokenizer/tokenizer.hpp"

namespace reprox::engine {

std::shared_ptr<const GuideVocabulary> make_guide_vocabulary(const tok::Tokenizer& tokenizer);

}  // namespace reprox::engine
