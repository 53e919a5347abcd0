// Shared helpers for the store tests: sample generations, field-by-field
// equality, and a synchronous get with a deadline.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <string>

#include "proxy/cache/cache_store.hpp"

namespace reprox::testing {

inline std::shared_ptr<Generation> sample_generation(const std::string& text, uint32_t n_choices = 2,
                                                     const std::string& model = "tiny-llama",
                                                     const std::string& ns = "team-a") {
  auto g = std::make_shared<Generation>();
  g->model = model;
  g->system_fingerprint = "fp_0123456789abcdef";
  g->ns = ns;
  g->n_choices = n_choices;
  g->created_unix_ms = 1700000000123;
  g->usage = Usage{17, 9, 4};
  for (uint32_t c = 0; c < n_choices; ++c) {
    g->events.push_back(GenEvent{c, Delta{"", "\"role\":\"assistant\"", ""}, ""});
    g->events.push_back(GenEvent{c, Delta{text + " #" + std::to_string(c), "",
                                          "{\"token\":\"x\",\"logprob\":-0.25,\"bytes\":[120],\"top_logprobs\":[]}"},
                                 ""});
    g->events.push_back(GenEvent{c, Delta{std::string("caf\xc3\xa9\n\"", 7) + std::string(1, '\0') + "q", "\"tool_calls\":[]", ""}, c == 0 ? "stop" : "length"});
  }
  return g;
}

inline void expect_same_generation(const Generation& a, const Generation& b) {
  EXPECT_EQ(a.model, b.model);
  EXPECT_EQ(a.system_fingerprint, b.system_fingerprint);
  EXPECT_EQ(a.ns, b.ns);
  EXPECT_EQ(a.n_choices, b.n_choices);
  EXPECT_EQ(a.created_unix_ms, b.created_unix_ms);
  EXPECT_EQ(a.usage.prompt_tokens, b.usage.prompt_tokens);
  EXPECT_EQ(a.usage.completion_tokens, b.usage.completion_tokens);
  EXPECT_EQ(a.usage.cached_tokens, b.usage.cached_tokens);
  ASSERT_EQ(a.events.size(), b.events.size());
  for (size_t i = 0; i < a.events.size(); ++i) {
    EXPECT_EQ(a.events[i].choice, b.events[i].choice) << i;
    EXPECT_EQ(a.events[i].delta.content, b.events[i].delta.content) << i;
    EXPECT_EQ(a.events[i].delta.extra, b.events[i].delta.extra) << i;
    EXPECT_EQ(a.events[i].delta.logprobs, b.events[i].delta.logprobs) << i;
    EXPECT_EQ(a.events[i].finish_reason, b.events[i].finish_reason) << i;
  }
}

// Waits for the callback; a store that never answers fails the test.
inline Lookup get_sync(CacheStore& store, const std::string& key,
                       std::chrono::milliseconds limit = std::chrono::milliseconds(2000)) {
  auto promise = std::make_shared<std::promise<Lookup>>();
  auto future = promise->get_future();
  store.get(key, [promise](Lookup l) { promise->set_value(std::move(l)); });
  if (future.wait_for(limit) != std::future_status::ready) {
    ADD_FAILURE() << "get(" << key << ") did not answer within " << limit.count() << " ms";
    return {};
  }
  return future.get();
}

}  // namespace reprox::testing
