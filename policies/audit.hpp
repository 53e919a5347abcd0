// Reproducibility audit rule: when a re-generation counts as the same answer
// as the cached one.
#pragma once

#include <cstdint>
#include <string>

#include "common/generation.hpp"

namespace reprox::policy {

// True when `a` and `b` are the same answer: per choice the same text, the
// same other delta members (tool calls), the same logprobs and the same
// finish_reason, plus the same system_fingerprint and token counts. How the
// text was cut into stream chunks and usage.cached_tokens (KV reuse) are not
// part of the answer. On a difference, `why` (when given) names the first one.
bool same_answer(const Generation& a, const Generation& b, std::string* why = nullptr);

// How alike two answers' texts are, token by token: the Jaccard index of
// their whitespace-separated tokens (all choices together), in [0, 1]; 1
// for the same text, 1 for two empty texts.
double answer_similarity(const Generation& a, const Generation& b);

}  // namespace reprox::policy
