// Near-duplicate matching on the chat path. Only exact misses of requests
// whose rule has near matching on (and that did not turn it off with
// cache: {"near": false}) consult the index; an exact hit never does.
//
// serve: the best unvetoed candidate at or above the rule's threshold
// answers, from the store (so purges and TTLs apply), with
// x-reprox-cache: near-hit, x-reprox-similarity and x-reprox-near-key;
// nothing is written under the request's key and nothing is audited.
// shadow: the request is generated as an exact miss; once done, its answer
// is compared with the would-be near-hit's (reprox_near_shadow_total
// {outcome="same|different|vetoed|none"}, reprox_near_answer_similarity).
//
// Threading: the request's strand; index and store callbacks are posted
// back to it.
#pragma once

#include <chrono>
#include <memory>

#include "proxy/app/chat_handler.hpp"

namespace reprox {

// Whether near matching applies to `p`: an index, a rule with it on, and
// no cache: {"near": false} on the request.
bool near_applies(const AppContext& app, const PreparedChat& p);

void after_exact_miss(const std::shared_ptr<ChatContext>& c);

// After a generation for `prepared` completed (any thread): when it was
// stored under a rule with near matching, records it in the index; when a
// shadow comparison was set up, counts its outcome.
void near_after_generation(AppContext& app, const PreparedChat& prepared, const Generation& generation, bool stored,
                           std::chrono::seconds ttl, const std::shared_ptr<const Generation>& shadow);

}  // namespace reprox
