#pragma once
// A tiny default-architecture model and helpers to run requests through a
// LocalBackend, alone or many at once.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "proxy/backend/local_backend.hpp"
#include "engine/tiny/make_tiny_model.hpp"
#include "tests/support/chat_request_builder.hpp"
#include "tests/support/collect_sink.hpp"

namespace reprox::engine::batching_test {

using Collect = testing_support::CollectSink;

using testing_support::Sampling;

inline Sampling random_sampling(std::mt19937& rng) {
  static const double temps[] = {0.0, 0.6, 1.0, 1.4};
  auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  Sampling s;
  s.temperature = temps[pick(4)];
  s.top_p = pick(3) == 0 ? 0.85 : 1.0;
  s.top_k = pick(4) == 0 ? 25 : 0;
  s.presence_penalty = pick(5) == 0 ? 0.6 : 0.0;
  s.frequency_penalty = pick(5) == 0 ? 0.4 : 0.0;
  s.logprobs = pick(2) == 0;
  s.top_logprobs = s.logprobs ? pick(4) : 0;
  s.n = pick(5) == 0 ? 1 + pick(3) : 1;
  s.max_tokens = 4 + pick(28);
  s.seed = std::uniform_int_distribution<int64_t>(0, 1'000'000)(rng);
  if (pick(6) == 0) s.stop = {"e", "the"};
  s.min_p = pick(5) == 0 ? 0.08 : 0.0;
  s.repetition_penalty = pick(5) == 0 ? 1.3 : 1.0;
  // vLLM's stop controls: "." (id 13) made likely and ending the choice,
  // held back for the first tokens, kept in the text.
  if (pick(4) == 0) {
    s.logit_bias = {{13, 6.0}};
    s.stop_token_ids = {13};
    s.include_stop = pick(2) == 0;
  }
  s.min_tokens = pick(4) == 0 ? pick(static_cast<int>(s.max_tokens)) : 0;
  s.ignore_eos = pick(6) == 0;
  if (pick(8) == 0) s.bad_words = {"e", "the"};
  if (pick(10) == 0)
    for (int64_t id = 0; id < 64; ++id) s.allowed_token_ids.push_back(id);
  // Guided decoding, without the options it refuses (min_tokens, nothing
  // to end the answer) and without allowed ids that could not spell it.
  if (pick(6) == 0) {
    const int kind = pick(3);
    if (kind == 0) s.json_mode = true;
    if (kind == 1) s.guided_choice = {"maybe not", "no", "yes"};
    if (kind == 2)
      s.json_schema = R"({"type":"object","properties":{"city":{"type":"string"},"rank":{"type":"integer"},)"
                      R"("tags":{"type":"array","items":{"enum":["a","b"]}}},"required":["city"]})";
    s.min_tokens = 0;
    s.ignore_eos = s.ignore_eos && !s.stop_token_ids.empty();
    s.allowed_token_ids.clear();
  }
  return s;
}

inline std::string random_text(std::mt19937& rng, int words) {
  static const char* vocab[] = {"river", "bridge", "cat", "quantum", "tea", "map", "seven", "blue", "Paris",
                                "why", "code", "slowly", "über", "東京", "42", "and", "the", "of", "!", "?"};
  std::string t;
  for (int i = 0; i < words; ++i) {
    if (i) t += ' ';
    t += vocab[std::uniform_int_distribution<int>(0, 19)(rng)];
  }
  return t;
}

class BatchFixture : public ::testing::Test {
 protected:
  static std::string make_model(const std::string& name) {
    return make_preset_model("tiny", name, 512, REPROX_NPM_FIXTURES_DIR);
  }

  static std::shared_ptr<BackendRequest> request(LocalBackend& b, const std::string& text, const Sampling& s,
                                                 const std::string& tenant = "") {
    return testing_support::chat_request(b.models().front().id, {testing_support::chat_message("user", text)}, s,
                                         tenant);
  }

  struct Running {
    std::shared_ptr<Collect> sink;
    std::future<bool> done;
    std::unique_ptr<GenerationHandle> handle;
  };

  static Running start(LocalBackend& b, std::shared_ptr<BackendRequest> r) {
    Running run;
    run.sink = std::make_shared<Collect>();
    run.done = run.sink->done.get_future();
    api::ApiError err;
    run.handle = b.generate(std::move(r), run.sink, &err);
    EXPECT_TRUE(run.handle) << err.to_json();
    return run;
  }

  // Waits for the answer; its transcript, or "" after an error.
  static std::string finish(Running& run) {
    if (!run.handle) return "";
    run.sink->ok = run.done.get();
    EXPECT_TRUE(run.sink->ok) << run.sink->error.to_json();
    return run.sink->ok ? run.sink->transcript() : "";
  }
};

}  // namespace reprox::engine::batching_test
