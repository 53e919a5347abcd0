// The local backend's own contract beyond the shared conformance suite:
// refusals with clear errors, the text endpoints, stop strings and n.
#include "tests/proxy/backend/local_backend_fixture.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <future>
#include <limits>
#include <thread>

namespace reprox::engine {
namespace {

TEST_F(LocalBackendTest, RefusesWhatItCannotHonourWithA400NamingTheParam) {
  api::ChatRequest req;
  req.tools = json::Value(json::Array{json::Value(json::Object{})});
  auto e = backend_->check_supported(req);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->status, 400);
  EXPECT_EQ(e->param, "tools");
  req.tools = json::Value();
  ASSERT_FALSE(json::parse(R"({"type":"json_schema","json_schema":{"name":"x","schema":{"type":"object",
      "properties":{"s":{"type":"string","pattern":"^a"}}}}})",
                           req.response_format));
  e = backend_->check_supported(req);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->param, "response_format");
  EXPECT_NE(e->message.find("'pattern'"), std::string::npos) << e->message;
  for (const char* type : {"text", "json_object", "json_schema"}) {
    req.response_format = json::Value(json::Object{{"type", json::Value(type)}});
    EXPECT_FALSE(backend_->check_supported(req)) << type;
  }
  // Options read from the body as sent: legacy `functions` (tools by their
  // old name), a tool or function choice that needs a call, audio output,
  // a web search.
  const std::pair<const char*, const char*> refused[] = {
      {"functions", R"({"functions": [{"name": "lookup", "parameters": {}}]})"},
      {"function_call", R"({"function_call": {"name": "lookup"}})"},
      {"modalities", R"({"modalities": ["text", "audio"], "audio": {"voice": "alloy", "format": "wav"}})"},
      {"audio", R"({"audio": {"voice": "alloy", "format": "wav"}})"},
      {"web_search_options", R"({"web_search_options": {}})"},
  };
  for (const auto& [param, body] : refused) {
    api::ChatRequest r;
    ASSERT_FALSE(json::parse(body, r.raw));
    e = backend_->check_supported(r);
    ASSERT_TRUE(e) << body;
    EXPECT_EQ(e->status, 400);
    EXPECT_EQ(e->param, param);
    EXPECT_NE(e->message.find("use --upstream"), std::string::npos) << e->message;
  }
  for (const char* choice : {R"("required")", R"({"type": "function", "function": {"name": "lookup"}})"}) {
    api::ChatRequest r;
    ASSERT_FALSE(json::parse(choice, r.tool_choice));
    e = backend_->check_supported(r);
    ASSERT_TRUE(e) << choice;
    EXPECT_EQ(e->param, "tool_choice");
  }
  // What cannot change a text answer passes.
  api::ChatRequest harmless;
  harmless.tool_choice = json::Value("none");
  ASSERT_FALSE(json::parse(R"({"modalities": ["text"], "function_call": "auto", "prediction": {"type": "content",
      "content": "x"}, "store": true, "metadata": {"a": "b"}, "parallel_tool_calls": true})",
                           harmless.raw));
  EXPECT_FALSE(backend_->check_supported(harmless));
  harmless.tool_choice = json::Value("auto");
  EXPECT_FALSE(backend_->check_supported(harmless));
}

TEST_F(LocalBackendTest, AnImageAudioOrFilePartIsA400NotAnAnswerToTheTextAlone) {
  auto parts = [](const char* type) {
    json::Object text{{"type", json::Value("text")}, {"text", json::Value("what is this?")}};
    json::Object other{{"type", json::Value(type)}};
    return json::Value(json::Array{json::Value(std::move(text)), json::Value(std::move(other))});
  };
  for (const char* type : {"image_url", "input_audio", "file"}) {
    api::ChatRequest req;
    req.messages.resize(2);
    req.messages[0].role = "system";
    req.messages[0].content = json::Value("be brief");
    req.messages[1].role = "user";
    req.messages[1].content = parts(type);
    auto e = backend_->check_supported(req);
    ASSERT_TRUE(e) << type;
    EXPECT_EQ(e->status, 400);
    EXPECT_EQ(e->param, "messages[1].content[1].type");
    EXPECT_NE(e->message.find(type), std::string::npos) << e->message;
  }
  // Text parts, and an assistant's refusal part, are text the engine reads.
  api::ChatRequest req;
  req.messages.resize(2);
  req.messages[0].role = "user";
  req.messages[0].content = json::Value(json::Array{json::Value(
      json::Object{{"type", json::Value("text")}, {"text", json::Value("hi")}})});
  req.messages[1].role = "assistant";
  req.messages[1].content = json::Value(json::Array{json::Value(
      json::Object{{"type", json::Value("refusal")}, {"refusal", json::Value("no")}})});
  EXPECT_FALSE(backend_->check_supported(req));
  const json::Value rendered = template_messages(req.messages);
  EXPECT_EQ(rendered.as_array()[0].find("content")->as_string(), "hi");
  EXPECT_EQ(rendered.as_array()[1].find("content")->as_string(), "no");
}

// A legacy function exchange reaches the chat template whole, as vLLM
// passes it: the assistant's function_call and the function message.
TEST(TemplateMessages, ALegacyFunctionCallReachesTheTemplate) {
  std::vector<api::ChatMessage> messages(2);
  messages[0].role = "assistant";
  messages[0].function_call =
      json::Value(json::Object{{"name", json::Value("lookup")}, {"arguments", json::Value("{\"q\":1}")}});
  messages[1].role = "function";
  messages[1].name = "lookup";
  messages[1].content = json::Value("42");
  const json::Value rendered = template_messages(messages);
  const json::Value* call = rendered.as_array()[0].find("function_call");
  ASSERT_TRUE(call);
  EXPECT_EQ(call->find("name")->as_string(), "lookup");
  EXPECT_TRUE(rendered.as_array()[0].find("content")->is_null());
  EXPECT_EQ(rendered.as_array()[1].find("role")->as_string(), "function");
  EXPECT_EQ(rendered.as_array()[1].find("name")->as_string(), "lookup");
  EXPECT_EQ(rendered.as_array()[1].find("content")->as_string(), "42");
}

// Keys are int64 in the request and int32 in the engine: a key past the
// vocabulary (2^32 + 5 here) must be a 400, not wrap onto token 5.
TEST_F(LocalBackendTest, ALogitBiasKeyPastTheVocabularyIsA400) {
  const int64_t vocab = backend_->engine().vocab_size();
  for (int64_t id : {vocab, int64_t{4294967301}, int64_t{-1}}) {
    api::ChatRequest req;
    req.logit_bias = {{id, 100.0}};
    auto e = backend_->check_supported(req);
    ASSERT_TRUE(e) << id;
    EXPECT_EQ(e->status, 400);
    EXPECT_EQ(e->param, "logit_bias");
    EXPECT_NE(e->message.find(std::to_string(id)), std::string::npos) << e->message;
  }
  api::ChatRequest req;
  req.logit_bias = {{0, 1.0}, {vocab - 1, -100.0}};
  EXPECT_FALSE(backend_->check_supported(req));
}

// top_k is int64 in the request and int32 in the engine: a huge top_k
// keeps every token, as any top_k past the vocabulary does.
TEST_F(LocalBackendTest, AHugeTopKKeepsEveryTokenRatherThanWrapping) {
  for (int64_t top_k : {int64_t{4294967297}, int64_t{2147483648}, std::numeric_limits<int64_t>::max()}) {
    auto r = request("hi");
    r->chat.top_k = top_k;
    EXPECT_EQ(sampling_params(*r).top_k, std::numeric_limits<int32_t>::max()) << top_k;
  }
  auto r = request("hi");
  r->chat.top_k = 40;
  EXPECT_EQ(sampling_params(*r).top_k, 40);
}

// min_p and repetition_penalty reach the sampler; a strong repetition
// penalty changes a greedy answer over the prompt's own words, and the same
// request answers the same bytes again.
TEST_F(LocalBackendTest, MinPAndRepetitionPenaltyReachTheSampler) {
  auto r = request("hi");
  r->chat.min_p = 0.1;
  r->chat.repetition_penalty = 1.3;
  EXPECT_EQ(sampling_params(*r).min_p, 0.1);
  EXPECT_EQ(sampling_params(*r).repetition_penalty, 1.3);
  auto greedy = [](double penalty) {
    auto q = request("the the the the the the the the", 16);
    q->chat.temperature = 0;
    q->chat.repetition_penalty = penalty;
    return run(q)->transcript();
  };
  const std::string plain = greedy(1.0), penalized = greedy(10.0);
  EXPECT_NE(penalized, plain);
  EXPECT_EQ(greedy(10.0), penalized);
}

// vLLM's stop controls. A +100 logit_bias makes the model draw a chosen id
// every step; the tiny model's eos is Qwen3's <|im_end|>.
TEST_F(LocalBackendTest, IgnoreEosAndSkipSpecialTokens) {
  const auto eos = backend_->engine().tokenizer()->encode("<|im_end|>", true);
  ASSERT_EQ(eos.size(), 1u);
  auto r = request("hi", 5);
  r->chat.temperature = 0;
  r->chat.logit_bias = {{eos[0], 100.0}};
  auto plain = run(r);
  EXPECT_EQ(plain->text(), "");
  EXPECT_EQ(plain->events.back().finish_reason, "stop");
  EXPECT_EQ(plain->usage.completion_tokens, 1);
  r->chat.ignore_eos = true;
  auto ignored = run(r);
  EXPECT_EQ(ignored->text(), "") << "a special token has no text";
  EXPECT_EQ(ignored->events.back().finish_reason, "length");
  EXPECT_EQ(ignored->usage.completion_tokens, 5);
  r->chat.skip_special_tokens = false;
  auto shown = run(r);
  EXPECT_EQ(shown->text(), "<|im_end|><|im_end|><|im_end|><|im_end|><|im_end|>");
  EXPECT_EQ(run(r)->transcript(), shown->transcript());
}

TEST_F(LocalBackendTest, StopTokenIdsEndAChoiceAsEosDoes) {
  const auto hello = backend_->engine().tokenizer()->encode("Hello", false);
  ASSERT_EQ(hello.size(), 1u);
  auto r = request("hi", 8);
  r->chat.temperature = 0;
  r->chat.logit_bias = {{hello[0], 100.0}};
  EXPECT_EQ(run(r)->text(), "HelloHelloHelloHelloHelloHelloHelloHello");
  r->chat.stop_token_ids = {hello[0]};
  auto stopped = run(r);
  EXPECT_EQ(stopped->text(), "");
  EXPECT_EQ(stopped->events.back().finish_reason, "stop");
  EXPECT_EQ(stopped->usage.completion_tokens, 1);
  r->chat.include_stop_str_in_output = true;
  auto kept = run(r);
  EXPECT_EQ(kept->text(), "Hello");
  EXPECT_EQ(kept->events.back().finish_reason, "stop");
  // min_tokens holds the stop id back for its first draws.
  r->chat.include_stop_str_in_output = false;
  r->chat.min_tokens = 3;
  auto held = run(r);
  EXPECT_EQ(held->usage.completion_tokens, 4);
  EXPECT_EQ(held->events.back().finish_reason, "stop");
  EXPECT_EQ(held->text().find("Hello"), std::string::npos) << held->text();
  EXPECT_EQ(run(r)->transcript(), held->transcript());
  // An id past the vocabulary is a 400.
  r->chat.stop_token_ids = {1 << 30};
  api::ApiError err;
  EXPECT_FALSE(backend_->generate(r, std::make_shared<Collect>(), &err));
  EXPECT_EQ(err.status, 400);
  EXPECT_NE(err.message.find("stop_token_ids"), std::string::npos) << err.message;
}

TEST_F(LocalBackendTest, AllowedTokenIdsAndBadWords) {
  const auto tokenizer = backend_->engine().tokenizer();
  const auto hello = tokenizer->encode("Hello", false);
  ASSERT_EQ(hello.size(), 1u);
  auto r = request("hi", 3);
  r->chat.temperature = 0;
  r->chat.allowed_token_ids = {hello[0]};
  EXPECT_EQ(run(r)->text(), "HelloHelloHello");
  r->chat.allowed_token_ids = {int64_t{1} << 30};
  auto refused = backend_->check_supported(r->chat);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->param, "allowed_token_ids");

  // A word made likely everywhere never appears once it is a bad word;
  // the answer stays the same bytes run to run.
  r = request("hi", 8);
  r->chat.temperature = 0.7;
  r->chat.logit_bias = {{hello[0], 8.0}};
  ASSERT_NE(run(r)->text().find("Hello"), std::string::npos);
  r->chat.bad_words = {"Hello"};
  auto clean = run(r);
  EXPECT_EQ(clean->text().find("Hello"), std::string::npos) << clean->text();
  EXPECT_EQ(run(r)->transcript(), clean->transcript());
  // Both the word and its form after a space.
  const auto ids = bad_word_ids(*tokenizer, {" Hello"});
  ASSERT_EQ(ids.size(), 2u);
  EXPECT_EQ(ids[0], hello);
  EXPECT_EQ(ids[1], tokenizer->encode(" Hello", false));
}

TEST_F(LocalBackendTest, TruncatePromptTokensKeepsTheLastTokens) {
  auto r = request("one two three four five six seven eight nine ten", 2);
  r->chat.temperature = 0;
  const int64_t whole = run(r)->usage.prompt_tokens;
  ASSERT_GT(whole, 8);
  r->chat.truncate_prompt_tokens = 8;
  EXPECT_EQ(run(r)->usage.prompt_tokens, 8);
  r->chat.truncate_prompt_tokens = -1;  // the model's context: this prompt fits it
  EXPECT_EQ(run(r)->usage.prompt_tokens, whole);
}

TEST_F(LocalBackendTest, ReturnTokensAsTokenIdsNamesLogprobTokensById) {
  auto r = request("hi", 3);
  r->chat.logprobs = true;
  r->chat.top_logprobs = 2;
  r->chat.return_tokens_as_token_ids = true;
  auto sink = run(r);
  size_t entries = 0;
  for (const auto& e : sink->events) {
    if (e.delta.logprobs.empty()) continue;
    json::Value list;
    ASSERT_FALSE(json::parse("[" + e.delta.logprobs + "]", list)) << e.delta.logprobs;
    for (const auto& entry : list.as_array()) {
      const std::string token = entry.find("token")->as_string();
      EXPECT_EQ(token.rfind("token_id:", 0), 0u) << token;
      EXPECT_EQ(entry.find("bytes")->as_array().size(), token.size());
      for (const auto& top : entry.find("top_logprobs")->as_array())
        EXPECT_EQ(top.find("token")->as_string().rfind("token_id:", 0), 0u);
      ++entries;
    }
  }
  EXPECT_EQ(entries, 3u);
}

TEST_F(LocalBackendTest, MinTokensHoldsBackEosAndStopStrings) {
  const auto eos = backend_->engine().tokenizer()->encode("<|im_end|>", true);
  auto r = request("tell me a story", 10);
  r->chat.temperature = 0;
  r->chat.logit_bias = {{eos[0], 100.0}};
  r->chat.min_tokens = 6;
  auto held = run(r);
  EXPECT_EQ(held->usage.completion_tokens, 7);
  EXPECT_EQ(held->events.back().finish_reason, "stop");
  EXPECT_FALSE(held->text().empty());
  // A stop string at the start of the answer cuts it to nothing, unless
  // min_tokens covers every token.
  r->chat.logit_bias.clear();
  r->chat.min_tokens = 0;
  const std::string full = run(r)->text();
  ASSERT_GE(full.size(), 2u);
  r->chat.stop = {full.substr(0, 2)};
  EXPECT_EQ(run(r)->text(), "");
  r->chat.min_tokens = 10;
  auto late = run(r);
  EXPECT_EQ(late->text(), full);
  EXPECT_EQ(late->events.back().finish_reason, "length");
}

// continue_final_message (HF's): the prompt ends right after the final
// message's text, so that the model continues it.
TEST_F(LocalBackendTest, ContinueFinalMessageCutsThePromptAfterItsText) {
  const std::string messages = R"("messages":[{"role":"user","content":"hi"},)"
                               R"({"role":"assistant","content":"The answer is"}])";
  auto prompt_of = [](const std::string& body) {
    auto [status, text] = backend_->call("/apply-template", body);
    EXPECT_EQ(status, 200) << text;
    json::Value v;
    EXPECT_FALSE(json::parse(text, v));
    return v.is_object() && v.find("prompt") ? v.find("prompt")->as_string() : std::string();
  };
  const std::string closed = prompt_of("{" + messages + R"(,"add_generation_prompt":false})");
  const std::string open =
      prompt_of("{" + messages + R"(,"add_generation_prompt":false,"continue_final_message":true})");
  ASSERT_NE(closed.find("The answer is<|im_end|>"), std::string::npos) << closed;
  EXPECT_EQ(open, closed.substr(0, closed.rfind("The answer is") + 13));
  auto [both, err] = backend_->call("/apply-template", "{" + messages + R"(,"continue_final_message":true})");
  EXPECT_EQ(both, 400) << err;
  auto [empty, why] = backend_->call(
      "/apply-template", R"({"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":""}],)"
                         R"("add_generation_prompt":false,"continue_final_message":true})");
  EXPECT_EQ(empty, 400) << why;

  // Generation renders the same prompt.
  auto r = request("hi", 4);
  api::ChatMessage start;
  start.role = "assistant";
  start.content = json::Value("The answer is");
  r->chat.messages.push_back(start);
  r->chat.add_generation_prompt = false;
  r->chat.continue_final_message = true;
  auto continued = run(r);
  EXPECT_EQ(continued->usage.prompt_tokens,
            static_cast<int64_t>(backend_->engine().prompts().encode(open).size()));
  EXPECT_EQ(run(r)->transcript(), continued->transcript());
}

TEST_F(LocalBackendTest, APromptPastTheContextWindowIsA400) {
  std::string longtext;
  for (int i = 0; i < 200; ++i) longtext += "word ";
  auto sink = std::make_shared<Collect>();
  api::ApiError err;
  auto handle = backend_->generate(request(longtext), sink, &err);
  EXPECT_FALSE(handle);
  EXPECT_EQ(err.status, 400);
  EXPECT_EQ(err.code, "context_length_exceeded");
}

TEST_F(LocalBackendTest, MaxTokensIsClippedToTheContextWindow) {
  auto sink = run(request("hi", 100000));
  EXPECT_EQ(sink->events.back().finish_reason, "length");
  EXPECT_LT(sink->usage.prompt_tokens + sink->usage.completion_tokens, 97);
}

TEST_F(LocalBackendTest, SameRequestSameEventsAndChoicesDiffer) {
  auto r = request("tell me a story", 16);
  r->chat.n = 2;
  auto a = run(r);
  auto b = run(r);
  ASSERT_EQ(a->events.size(), b->events.size());
  for (size_t i = 0; i < a->events.size(); ++i) {
    EXPECT_EQ(a->events[i].delta.content, b->events[i].delta.content);
    EXPECT_EQ(a->events[i].finish_reason, b->events[i].finish_reason);
  }
  EXPECT_NE(a->text(0), a->text(1));
  EXPECT_EQ(a->usage.completion_tokens, b->usage.completion_tokens);
}

TEST_F(LocalBackendTest, AStopStringCutsTheAnswerWhereItWouldAppear) {
  auto r = request("tell me a story", 24);
  r->chat.temperature = 0;
  auto full = run(r)->text();
  ASSERT_GE(full.size(), 6u);
  // Stop at a piece from the middle of the greedy answer.
  std::string stop = full.substr(full.size() / 2, 3);
  r->chat.stop = {stop};
  auto cut = run(r);
  EXPECT_EQ(cut->text(), full.substr(0, full.find(stop)));
  EXPECT_EQ(cut->events.back().finish_reason, "stop");
}

TEST_F(LocalBackendTest, TheQueueIsBoundedWith429) {
  // Long jobs fill the engine (16 sequences running, 16 requests waiting for
  // admission); the queue holds 2 more, then refuses.
  std::vector<std::unique_ptr<GenerationHandle>> handles;
  std::vector<std::shared_ptr<Collect>> sinks;
  api::ApiError err;
  bool refused = false;
  for (int i = 0; i < 64 && !refused; ++i) {
    auto sink = std::make_shared<Collect>();
    auto h = backend_->generate(request("story " + std::to_string(i), 90), sink, &err);
    if (!h) refused = true;
    else handles.push_back(std::move(h)), sinks.push_back(sink);
  }
  EXPECT_TRUE(refused);
  EXPECT_EQ(err.status, 429);
  handles.clear();  // cancels them all
  // The engine drops cancelled jobs at its next steps. Until a new job has
  // run, the queue may still be full for the tests after this one.
  bool drained = false;
  for (int i = 0; i < 1000 && !drained; ++i) {
    auto sink = std::make_shared<Collect>();
    auto done = sink->done.get_future();
    if (auto h = backend_->generate(request("hi", 1), sink, &err)) drained = done.get();
    else std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(drained);
}

TEST_F(LocalBackendTest, TextEndpoints) {
  auto [s1, tok] = backend_->call("/tokenize", R"({"prompt":"Hello <|im_start|>"})");
  EXPECT_EQ(s1, 200);
  json::Value t;
  ASSERT_FALSE(json::parse(tok, t));
  auto ids = backend_->engine().tokenizer()->encode("Hello <|im_start|>", true);
  ASSERT_EQ(t.find("count")->as_int(), static_cast<int64_t>(ids.size()));
  EXPECT_EQ(t.find("tokens")->as_array().back().as_int(), ids.back());

  std::string detok_body = "{\"tokens\":" + json::dump(*t.find("tokens")) + "}";
  auto [s2, detok] = backend_->call("/detokenize", detok_body);
  EXPECT_EQ(s2, 200);
  EXPECT_EQ(detok, R"({"prompt":"Hello <|im_start|>"})");

  auto [s3, tmpl] = backend_->call("/apply-template", R"({"messages":[{"role":"user","content":"hi"}]})");
  EXPECT_EQ(s3, 200);
  json::Value rendered;
  ASSERT_FALSE(json::parse(tmpl, rendered));
  const std::string prompt = rendered.find("prompt")->as_string();
  EXPECT_NE(prompt.find("<|im_start|>user\nhi<|im_end|>"), std::string::npos) << prompt;
  EXPECT_NE(prompt.find("<|im_start|>assistant"), std::string::npos) << prompt;

  auto [s4, bad] = backend_->call("/detokenize", R"({"tokens":[1,-5]})");
  EXPECT_EQ(s4, 400);
  EXPECT_NE(bad.find("tokens[1]"), std::string::npos);
  auto [s5, missing] = backend_->call("/apply-template", R"({"messages":[]})");
  EXPECT_EQ(s5, 400);
  auto [s6, wrong_model] = backend_->call("/tokenize", R"({"model":"nope","prompt":"x"})");
  EXPECT_EQ(s6, 404);
}

// The text endpoints read messages as a chat request does: text parts
// joined, a refusal part read as text, an image part refused. Given raw
// part arrays, the template failed ("can only concatenate str").
TEST_F(LocalBackendTest, TextEndpointsRenderContentPartsAsGenerationDoes) {
  const std::string parts = R"({"messages":[{"role":"user","content":[{"type":"text","text":"hi "},)"
                            R"({"type":"text","text":"there"}]},{"role":"assistant","content":[)"
                            R"({"type":"refusal","refusal":"no"}]},{"role":"user","content":"ok"}]})";
  const std::string plain = R"({"messages":[{"role":"user","content":"hi there"},)"
                            R"({"role":"assistant","content":"no"},{"role":"user","content":"ok"}]})";
  auto [s1, from_parts] = backend_->call("/apply-template", parts);
  auto [s2, from_plain] = backend_->call("/apply-template", plain);
  EXPECT_EQ(s1, 200) << from_parts;
  EXPECT_EQ(s2, 200) << from_plain;
  EXPECT_EQ(from_parts, from_plain);
  auto [s3, tokens] = backend_->call("/tokenize", parts);
  EXPECT_EQ(s3, 200) << tokens;
  auto [s4, image] = backend_->call(
      "/tokenize", R"({"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"u"}}]}]})");
  EXPECT_EQ(s4, 400);
  EXPECT_NE(image.find("messages[0].content[0].type"), std::string::npos) << image;
  auto [s5, bad_role] = backend_->call("/apply-template", R"({"messages":[{"role":"wizard","content":"x"}]})");
  EXPECT_EQ(s5, 400);
  EXPECT_NE(bad_role.find("messages[0].role"), std::string::npos) << bad_role;
}

// chat_template_kwargs reach the template: Qwen3's enable_thinking = false
// writes an empty think block after the generation prompt, in the text
// endpoints and in generation alike.
TEST_F(LocalBackendTest, ChatTemplateKwargsReachTheTemplate) {
  const std::string messages = R"("messages":[{"role":"user","content":"hi"}])";
  auto [s1, plain] = backend_->call("/apply-template", "{" + messages + "}");
  auto [s2, off] = backend_->call("/apply-template",
                                  "{" + messages + R"(,"chat_template_kwargs":{"enable_thinking":false}})");
  ASSERT_EQ(s1, 200) << plain;
  ASSERT_EQ(s2, 200) << off;
  EXPECT_EQ(plain.find("<think>"), std::string::npos) << plain;
  EXPECT_NE(off.find(R"(<|im_start|>assistant\n<think>\n\n</think>\n\n")"), std::string::npos) << off;
  auto [s3, own] = backend_->call("/tokenize", "{" + messages + R"(,"chat_template_kwargs":{"messages":[]}})");
  EXPECT_EQ(s3, 400);
  EXPECT_NE(own.find("chat_template_kwargs.messages"), std::string::npos) << own;
  auto [s4, list] = backend_->call("/tokenize", "{" + messages + R"(,"chat_template_kwargs":[1]})");
  EXPECT_EQ(s4, 400);
  EXPECT_NE(list.find("chat_template_kwargs"), std::string::npos) << list;

  auto thinking = request("hi", 1);
  thinking->chat.temperature = 0;
  auto not_thinking = request("hi", 1);
  not_thinking->chat.temperature = 0;
  ASSERT_FALSE(json::parse(R"({"enable_thinking": false})", not_thinking->chat.chat_template_kwargs));
  auto a = run(thinking);
  auto b = run(not_thinking);
  // "<think>\n\n</think>\n\n" is 4 more tokens of the prompt.
  EXPECT_EQ(b->usage.prompt_tokens, a->usage.prompt_tokens + 4);
}

TEST_F(LocalBackendTest, FingerprintDependsOnWeightsAndMode) {
  auto fp = backend_->fingerprint("");
  EXPECT_EQ(fp.size(), 19u);
  EXPECT_EQ(fp.rfind("fp_", 0), 0u);
  EXPECT_NE(make_system_fingerprint("aa", "float32", "cpu"), make_system_fingerprint("ab", "float32", "cpu"));
  EXPECT_NE(make_system_fingerprint("aa", "float32", "cpu"), make_system_fingerprint("aa", "bfloat16", "cpu"));
  EXPECT_NE(make_system_fingerprint("aa", "float32", "cpu"), make_system_fingerprint("aa", "float32", "cuda:0"));
}

}  // namespace
}  // namespace reprox::engine
