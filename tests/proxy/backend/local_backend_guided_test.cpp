// Guided decoding through the local backend on a real tokenizer (Qwen3's):
// JSON mode, JSON schema (bounds, formats and unions included) and guided_choice
// answers stay in their language and are the same bytes run to run,
// requests for the same guide share its masks, and conflicting options are
// refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <initializer_list>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "engine/sampling/json_machine.hpp"
#include "tests/proxy/backend/local_backend_fixture.hpp"

namespace reprox::engine {
namespace {

std::string finish_reason(const Collect& sink, uint32_t choice) {
  for (const auto& e : sink.events)
    if (e.choice == choice && !e.finish_reason.empty()) return e.finish_reason;
  return "";
}

json::Value json_object_format() { return json::Value(json::Object{{"type", json::Value("json_object")}}); }

class LocalBackendGuidedTest : public LocalBackendTest {
 protected:
  // The ids of `pieces`, each with a bias of 12: leans the random test
  // model towards short answers, so that many end.
  static std::vector<std::pair<int64_t, double>> lean_towards(std::initializer_list<const char*> pieces) {
    const auto tokenizer = backend_->engine().tokenizer();
    std::vector<std::pair<int64_t, double>> bias;
    for (const char* piece : pieces)
      for (const int32_t id : tokenizer->encode(piece, true)) bias.emplace_back(id, 12.0);
    std::sort(bias.begin(), bias.end());
    return bias;
  }

  // Runs guided request `r` twice, expecting the same transcript. When its
  // answer ended with "stop", sets *text and its parse *answer: true.
  static bool ended_answer(const std::shared_ptr<BackendRequest>& r, json::Value* answer, std::string* text) {
    EXPECT_FALSE(backend_->check_supported(r->chat));
    auto sink = run(r);
    *text = sink->text();
    EXPECT_EQ(run(r)->transcript(), sink->transcript()) << "seed " << r->seed;
    if (finish_reason(*sink, 0) != "stop") return false;
    const bool object = !json::parse(*text, *answer) && answer->is_object();
    EXPECT_TRUE(object) << *text;
    return object;
  }
};

TEST_F(LocalBackendGuidedTest, JsonModeAnswersAreOneJsonObject) {
  const auto bias = lean_towards({"{\"", "a", "\":", " ", "1", "}", "<|im_end|>"});
  int whole = 0;
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    auto r = request("give me a JSON object", 40);
    r->seed = seed;
    r->chat.temperature = 1.0;
    r->chat.n = 2;
    r->chat.response_format = json_object_format();
    r->chat.logit_bias = bias;
    auto sink = run(r);
    for (uint32_t c = 0; c < 2; ++c) {
      const std::string text = sink->text(c);
      JsonMachine m;
      EXPECT_TRUE(m.feed(text)) << "seed " << seed << ": " << text;
      if (finish_reason(*sink, c) != "stop") continue;
      ++whole;
      json::Value v;
      EXPECT_FALSE(json::parse(text, v)) << text;
      EXPECT_TRUE(v.is_object()) << text;
    }
    EXPECT_EQ(run(r)->transcript(), sink->transcript()) << "seed " << seed;
  }
  EXPECT_GE(whole, 6);

  // Without the bias the same request wanders, yet stays a JSON prefix.
  auto r = request("give me a JSON object", 30);
  r->chat.response_format = json_object_format();
  const std::string text = run(r)->text();
  JsonMachine m;
  EXPECT_TRUE(m.feed(text)) << text;
}

TEST_F(LocalBackendGuidedTest, GuidedChoiceAnswersAreOneOfTheChoices) {
  const std::set<std::string> choices = {"yes", "no", "maybe later", "\xC3\xA9t\xC3\xA9"};
  std::set<std::string> seen;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    auto r = request("yes or no?", 12);
    r->seed = seed;
    r->chat.n = 4;
    r->chat.guided_choice.assign(choices.begin(), choices.end());
    auto sink = run(r);
    for (uint32_t c = 0; c < 4; ++c) {
      EXPECT_EQ(choices.count(sink->text(c)), 1u) << sink->text(c);
      EXPECT_EQ(finish_reason(*sink, c), "stop");
      seen.insert(sink->text(c));
    }
    EXPECT_EQ(run(r)->transcript(), sink->transcript());
  }
  EXPECT_GE(seen.size(), 3u) << "the draw picks among the choices";
  // Greedy: the model's own favourite, every time.
  auto r = request("yes or no?", 12);
  r->chat.temperature = 0;
  r->chat.guided_choice = {"no", "yes"};
  const std::string greedy = run(r)->text();
  EXPECT_TRUE(greedy == "yes" || greedy == "no") << greedy;
  EXPECT_EQ(run(r)->text(), greedy);
}

// A strict schema, as response_format json_schema and as vLLM's guided_json:
// answers that end are objects with exactly its keys, in order, of its types.
TEST_F(LocalBackendGuidedTest, JsonSchemaAnswersFollowTheSchema) {
  const char* schema = R"({"type":"object","properties":{"answer":{"enum":["yes","no"]},
      "score":{"type":"integer"},"notes":{"type":"array","items":{"type":"boolean"}}},
      "required":["answer","score","notes"],"additionalProperties":false})";
  const auto bias = lean_towards({"{\"", "\":", "\"", ",\"", "[", "]", "}", "<|im_end|>"});
  int whole = 0;
  for (const bool vllm : {false, true}) {
    for (uint64_t seed = 1; seed <= 6; ++seed) {
      auto r = request("rate it", 40);
      r->seed = seed;
      r->chat.logit_bias = bias;
      if (vllm) {
        ASSERT_FALSE(json::parse(std::string(R"({"guided_json":)") + schema + "}", r->chat.raw));
      } else {
        ASSERT_FALSE(json::parse(std::string(R"({"type":"json_schema","json_schema":{"name":"rating","schema":)") +
                                     schema + "}}",
                                 r->chat.response_format));
      }
      json::Value v;
      std::string text;
      if (!ended_answer(r, &v, &text)) continue;
      ++whole;
      ASSERT_TRUE(v.is_object()) << text;
      const auto& members = v.as_object();
      ASSERT_EQ(members.size(), 3u) << text;
      EXPECT_EQ(members[0].first, "answer");
      EXPECT_TRUE(members[0].second.as_string() == "yes" || members[0].second.as_string() == "no") << text;
      EXPECT_EQ(members[1].first, "score");
      EXPECT_TRUE(members[1].second.is_number()) << text;
      EXPECT_EQ(text.find('.', text.find("score")), std::string::npos) << "an integer: " << text;
      EXPECT_EQ(members[2].first, "notes");
      for (const auto& item : members[2].second.as_array()) EXPECT_TRUE(item.is_bool()) << text;
    }
  }
  EXPECT_GE(whole, 8);
}

// Bounds, as Pydantic writes them for conint(ge=1, le=5), conlist and
// constr(max_length=...), and a date's format: every answer that ends
// meets them.
TEST_F(LocalBackendGuidedTest, JsonSchemaAnswersMeetTheirBounds) {
  const char* schema = R"({"type":"object","properties":{"rating":{"type":"integer","minimum":1,"maximum":5},
      "weight":{"type":"number","exclusiveMinimum":0,"maximum":1},
      "tags":{"type":"array","items":{"type":"string","maxLength":4},"minItems":1,"maxItems":2},
      "day":{"type":"string","format":"date"}},
      "required":["rating","weight","tags","day"],"additionalProperties":false})";
  const auto bias = lean_towards({"{\"", "\":", "\"", ",\"", "[", "]", "}", "<|im_end|>"});
  int whole = 0;
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    auto r = request("rate it", 60);
    r->seed = seed;
    r->chat.logit_bias = bias;
    ASSERT_FALSE(json::parse(std::string(R"({"guided_json":)") + schema + "}", r->chat.raw));
    json::Value v;
    std::string text;
    if (!ended_answer(r, &v, &text)) continue;
    ++whole;
    const json::Value* rating = v.find("rating");
    const json::Value* weight = v.find("weight");
    const json::Value* tags = v.find("tags");
    ASSERT_TRUE(rating && weight && tags) << text;
    EXPECT_TRUE(rating->is_integer() && rating->as_double() >= 1 && rating->as_double() <= 5) << text;
    EXPECT_TRUE(weight->as_double() > 0 && weight->as_double() <= 1) << text;
    ASSERT_TRUE(tags->is_array()) << text;
    EXPECT_TRUE(tags->as_array().size() >= 1 && tags->as_array().size() <= 2) << text;
    for (const auto& tag : tags->as_array()) {
      size_t code_points = 0;
      for (const char c : tag.as_string()) code_points += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
      EXPECT_LE(code_points, 4u) << text;
    }
    const json::Value* day = v.find("day");
    ASSERT_TRUE(day && day->is_string()) << text;
    int y = 0, m = 0, d = 0;
    char tail = 0;
    EXPECT_EQ(std::sscanf(day->as_string().c_str(), "%4d-%2d-%2d%c", &y, &m, &d, &tail), 3) << text;
    EXPECT_EQ(day->as_string().size(), 10u) << text;
    const int days[] = {31, (y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    EXPECT_TRUE(y >= 1 && m >= 1 && m <= 12 && d >= 1 && d <= days[std::max(1, std::min(m, 12)) - 1]) << text;
  }
  EXPECT_GE(whole, 6);
}

// A discriminated union, as Pydantic writes Union[Cat, Dog] with a "kind"
// literal: every answer that ends is one branch, whole.
TEST_F(LocalBackendGuidedTest, JsonSchemaAnswersFollowOneBranchOfAUnion) {
  const char* schema = R"({"type":"object","properties":{"pet":{"anyOf":[{"$ref":"#/$defs/Cat"},{"$ref":"#/$defs/Dog"}]}},
      "required":["pet"],"additionalProperties":false,"$defs":{
      "Cat":{"type":"object","properties":{"kind":{"const":"cat"},"lives":{"type":"integer","minimum":1,"maximum":9}},
             "required":["kind","lives"],"additionalProperties":false},
      "Dog":{"type":"object","properties":{"kind":{"const":"dog"},"good":{"type":"boolean"}},
             "required":["kind","good"],"additionalProperties":false}}})";
  const auto bias = lean_towards({"{\"", "\":", "\"", ",\"", "}", "<|im_end|>"});
  std::set<std::string> kinds;
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    auto r = request("a pet, please", 40);
    r->seed = seed;
    r->chat.logit_bias = bias;
    ASSERT_FALSE(json::parse(std::string(R"({"type":"json_schema","json_schema":{"name":"pet","schema":)") + schema + "}}",
                             r->chat.response_format));
    json::Value v;
    std::string text;
    if (!ended_answer(r, &v, &text)) continue;
    const json::Value* pet = v.find("pet");
    ASSERT_TRUE(pet && pet->is_object()) << text;
    const auto& members = pet->as_object();
    ASSERT_EQ(members.size(), 2u) << text;
    const std::string kind = members[0].second.as_string();
    kinds.insert(kind);
    if (kind == "cat") {
      EXPECT_EQ(members[1].first, "lives") << text;
      EXPECT_TRUE(members[1].second.is_integer() && members[1].second.as_double() >= 1 &&
                  members[1].second.as_double() <= 9)
          << text;
    } else {
      EXPECT_EQ(kind, "dog") << text;
      EXPECT_EQ(members[1].first, "good") << text;
      EXPECT_TRUE(members[1].second.is_bool()) << text;
    }
  }
  EXPECT_EQ(kinds.size(), 2u) << "both branches drawn";
}

// Requests for the same guide share its masks: asking again walks no trie.
TEST_F(LocalBackendGuidedTest, RequestsForTheSameGuideShareItsMasks) {
  // The engine publishes its counters after each pass; once nothing runs,
  // they include the last one.
  auto settled_walks = [&] {
    for (int i = 0; i < 2000; ++i) {
      const auto stats = backend_->engine().batch_stats();
      if (stats.running == 0 && stats.waiting == 0) return stats.guide_mask_walks;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return backend_->engine().batch_stats().guide_mask_walks;
  };
  auto json_mode = request("give me a JSON object", 24);
  json_mode->seed = 17;
  json_mode->chat.response_format = json_object_format();
  auto choice = request("pick one", 12);
  choice->chat.guided_choice = {"shared-mask alpha", "shared-mask beta"};
  for (auto& r : {json_mode, choice}) {
    const uint64_t before = settled_walks();
    const std::string text = run(r)->text();
    const uint64_t first = settled_walks();
    EXPECT_EQ(run(r)->text(), text);
    EXPECT_EQ(settled_walks(), first) << "the same guide walked its states again";
    if (r == choice) {
      EXPECT_GT(first, before) << "a guide asked for the first time walks";
    }
  }
}

TEST_F(LocalBackendGuidedTest, GuidesRefuseOptionsThatWouldBreakThem) {
  api::ApiError err;
  auto r = request("hi", 8);
  r->chat.response_format = json_object_format();
  r->chat.min_tokens = 2;
  EXPECT_FALSE(backend_->generate(r, std::make_shared<Collect>(), &err));
  EXPECT_EQ(err.status, 400);
  EXPECT_NE(err.message.find("min_tokens"), std::string::npos) << err.message;
  r->chat.min_tokens = 0;
  r->chat.ignore_eos = true;
  EXPECT_FALSE(backend_->generate(r, std::make_shared<Collect>(), &err));
  EXPECT_EQ(err.status, 400);
  EXPECT_NE(err.message.find("ignore_eos"), std::string::npos) << err.message;
  r->chat.ignore_eos = false;
  r->chat.allowed_token_ids = {1, 2, 3};
  EXPECT_FALSE(backend_->generate(r, std::make_shared<Collect>(), &err));
  EXPECT_EQ(err.status, 400);
  EXPECT_NE(err.message.find("allowed_token_ids"), std::string::npos) << err.message;
  r->chat.allowed_token_ids.clear();
  r->chat.ignore_eos = true;
  // With a stop id something can still end the answer.
  r->chat.stop_token_ids = {backend_->engine().tokenizer()->encode("}", false).front()};
  r->chat.include_stop_str_in_output = true;
  auto sink = run(r);
  EXPECT_FALSE(sink->text().empty());
}

}  // namespace
}  // namespace reprox::engine
