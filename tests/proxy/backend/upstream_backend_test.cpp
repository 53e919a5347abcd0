// UpstreamBackend against the scripted upstream: what is sent, how each kind
// of answer is read, and the passthrough. (The Backend contract itself is in
// tests/proxy/backend/conformance.)
#include "proxy/backend/upstream_backend.hpp"

#include <gtest/gtest.h>

#include <boost/asio/executor_work_guard.hpp>
#include <future>
#include <thread>

#include "tests/proxy/backend/conformance/recording_sink.hpp"
#include "tests/proxy/backend/scripted_server.hpp"

namespace reprox::testing {
namespace {

using namespace std::chrono_literals;
using backend::UpstreamBackend;
using backend::UpstreamOptions;
namespace http = boost::beast::http;

json::Value parse(const std::string& text) {
  json::Value v;
  auto err = json::parse(text, v);
  EXPECT_FALSE(err) << err.message << " in " << text;
  return v;
}

std::string str(const json::Value* v) { return v && v->is_string() ? v->as_string() : "<absent>"; }

class UpstreamBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(server_.error(), "");
    for (int i = 0; i < 2; ++i) threads_.emplace_back([this] { ioc_.run(); });
  }
  void TearDown() override {
    work_.reset();
    ioc_.stop();
    for (auto& t : threads_) t.join();
  }

  UpstreamOptions options(std::string suffix = "") {
    UpstreamOptions o;
    o.url = server_.url() + suffix;
    o.first_byte_timeout = 5s;
    o.idle_timeout = 5s;
    o.fingerprint = "fp_configured";
    return o;
  }
  UpstreamBackend& backend(UpstreamOptions o) {
    backends_.push_back(std::make_unique<UpstreamBackend>(std::move(o), ioc_));
    return *backends_.back();
  }

  struct Run {
    std::shared_ptr<RecordingSink> sink = std::make_shared<RecordingSink>();
    std::unique_ptr<GenerationHandle> handle;
  };
  // `body` is the client's JSON body; n and seed as the proxy resolved them.
  Run generate(UpstreamBackend& b, const std::string& body, uint64_t seed = 7) {
    auto request = std::make_shared<BackendRequest>();
    request->chat.raw = parse(body);
    const json::Value* n = request->chat.raw.find("n");
    request->chat.n = n ? n->as_int() : 1;
    request->model_id = "scripted-model";
    request->seed = seed;
    Run run;
    api::ApiError refused;
    run.handle = b.generate(request, run.sink, &refused);
    EXPECT_TRUE(run.handle);
    return run;
  }
  Run generate_and_wait(UpstreamBackend& b, const std::string& body, uint64_t seed = 7) {
    Run run = generate(b, body, seed);
    EXPECT_TRUE(run.sink->wait_end());
    return run;
  }

  http::response<http::string_body> forward(UpstreamBackend& b,
                                            http::request<http::string_body> req) {
    std::promise<http::response<http::string_body>> got;
    b.forward(std::move(req), [&](http::response<http::string_body> r) { got.set_value(std::move(r)); });
    auto future = got.get_future();
    EXPECT_EQ(future.wait_for(10s), std::future_status::ready);
    return future.get();
  }

  ScriptedServer server_;
  boost::asio::io_context ioc_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_ =
      boost::asio::make_work_guard(ioc_);
  std::vector<std::thread> threads_;
  std::vector<std::unique_ptr<UpstreamBackend>> backends_;
};

const char* kHello = R"({"model":"alias","messages":[{"role":"user","content":"hello there"}]})";

TEST_F(UpstreamBackendTest, SendsTheRewrittenBodyAndConfiguredKey) {
  UpstreamOptions o = options();
  o.api_key = "sk-upstream";
  auto run = generate_and_wait(backend(o),
      R"({"model":"alias","messages":[{"role":"user","content":"hi"}],"stream":false,"user":"u1","cache":{"ttl":5}})",
      99);
  EXPECT_EQ(run.sink->completes(), 1);
  json::Value last = server_.get_json("/__last");
  EXPECT_EQ(str(last.find("path")), "/v1/chat/completions");
  const json::Value* body = last.find("body");
  ASSERT_TRUE(body && body->is_object());
  EXPECT_EQ(body->find("seed")->as_uint(), 99u);
  EXPECT_EQ(str(body->find("model")), "scripted-model");
  EXPECT_TRUE(body->find("stream")->as_bool());
  EXPECT_TRUE(body->find("stream_options")->find("include_usage")->as_bool());
  EXPECT_EQ(body->find("cache"), nullptr);
  EXPECT_EQ(body->find("max_tokens"), nullptr);
  EXPECT_EQ(str(body->find("user")), "u1");
  EXPECT_EQ(str(last.find("headers")->find("authorization")), "Bearer sk-upstream");
  EXPECT_EQ(run.sink->text(0), "seed=99 choice=0 model=scripted-model echo: hi");
  EXPECT_EQ(run.sink->fingerprint(), "fp_scripted00000");
}

TEST_F(UpstreamBackendTest, BasePathIsHonoured) {
  generate_and_wait(backend(options("/v1")), kHello);
  generate_and_wait(backend(options("/prefix/v1/")), kHello);
  json::Value counts = server_.get_json("/__count");
  EXPECT_EQ(counts.find("by_path")->find("/v1/chat/completions")->as_int(), 1);
  EXPECT_EQ(counts.find("by_path")->find("/prefix/v1/chat/completions")->as_int(), 1);
}

TEST_F(UpstreamBackendTest, FingerprintIsTheUpstreamsElseTheConfiguredOne) {
  auto run = generate_and_wait(backend(options()),
      R"({"messages":[{"role":"user","content":"x"}],"user":"fingerprint=fp_other"})");
  EXPECT_EQ(run.sink->fingerprint(), "fp_other");
  run = generate_and_wait(backend(options()),
      R"({"messages":[{"role":"user","content":"x"}],"user":"no_fingerprint"})");
  EXPECT_EQ(run.sink->completes(), 1);
  EXPECT_EQ(run.sink->fingerprint(), "fp_configured");
}

TEST_F(UpstreamBackendTest, MaxTokensGivesLength) {
  auto run = generate_and_wait(backend(options()),
      R"({"messages":[{"role":"user","content":"a b c d"}],"max_tokens":3})");
  EXPECT_EQ(run.sink->completes(), 1);
  EXPECT_EQ(run.sink->text(0), "seed=7 choice=0 model=scripted-model");
  EXPECT_EQ(run.sink->finish_reasons(0), std::vector<std::string>{"length"});
  EXPECT_EQ(run.sink->usage().completion_tokens, 3);
}

TEST_F(UpstreamBackendTest, LogprobsArrivePerEvent) {
  auto run = generate_and_wait(backend(options()),
      R"({"messages":[{"role":"user","content":"hi"}],"logprobs":true})");
  ASSERT_EQ(run.sink->completes(), 1);
  for (const auto& ev : run.sink->events()) {
    json::Value elements = parse("[" + ev.delta.logprobs + "]");
    ASSERT_EQ(elements.as_array().size(), 1u);
    EXPECT_EQ(str(elements.as_array()[0].find("token")), ev.delta.content);
  }
}

TEST_F(UpstreamBackendTest, ToolCallDeltasAreKeptAsExtra) {
  auto run = generate_and_wait(backend(options()),
      R"({"messages":[{"role":"user","content":"weather?"}],"user":"tool_calls"})");
  ASSERT_EQ(run.sink->completes(), 1);
  auto events = run.sink->events();
  ASSERT_EQ(events.size(), 3u);
  std::string arguments;
  for (const auto& ev : events) {
    EXPECT_EQ(ev.delta.content, "");
    json::Value delta = parse("{" + ev.delta.extra + "}");
    const json::Value& call = delta.find("tool_calls")->as_array()[0];
    arguments += call.find("function")->find("arguments")->as_string();
  }
  EXPECT_EQ(arguments, R"({"city":"Paris"})");
  EXPECT_EQ(events.back().finish_reason, "tool_calls");
}

TEST_F(UpstreamBackendTest, NonStreamAnswerIsTolerated) {
  auto run = generate_and_wait(backend(options()),
      R"({"messages":[{"role":"user","content":"hi"}],"n":2,"user":"nonstream"})");
  ASSERT_EQ(run.sink->completes(), 1) << run.sink->error().message;
  EXPECT_EQ(run.sink->text(0), "seed=7 choice=0 model=scripted-model echo: hi");
  EXPECT_EQ(run.sink->text(1), "seed=7 choice=1 model=scripted-model echo: hi");
  EXPECT_EQ(run.sink->finish_reasons(1), std::vector<std::string>{"stop"});
  EXPECT_GT(run.sink->usage().completion_tokens, 0);
}

TEST_F(UpstreamBackendTest, CrlfCommentsAndSeveralChoicesPerChunk) {
  auto run = generate_and_wait(backend(options()),
      R"({"messages":[{"role":"user","content":"hi"}],"n":3,"user":"crlf;comments;multi_choice_chunk"})");
  ASSERT_EQ(run.sink->completes(), 1) << run.sink->error().message;
  for (uint32_t i = 0; i < 3; ++i)
    EXPECT_EQ(run.sink->text(i), "seed=7 choice=" + std::to_string(i) + " model=scripted-model echo: hi");
}

TEST_F(UpstreamBackendTest, CleanEndWithoutDoneCompletesWhenEveryChoiceFinished) {
  auto run = generate_and_wait(backend(options()),
      R"({"messages":[{"role":"user","content":"hi"}],"user":"no_done;no_usage"})");
  EXPECT_EQ(run.sink->completes(), 1) << run.sink->error().message;
  EXPECT_EQ(run.sink->usage().completion_tokens, 0);
}

TEST_F(UpstreamBackendTest, CutAfterTheLastChoiceButBeforeDoneIsStillAnError) {
  // 1 role chunk + 6 pieces; the 8th chunk would be usage.
  auto run = generate_and_wait(backend(options()),
      R"({"messages":[{"role":"user","content":"hi"}],"user":"cut_after=6"})");
  EXPECT_EQ(run.sink->completes(), 0);
  EXPECT_EQ(run.sink->error().status, 502);
}

TEST_F(UpstreamBackendTest, InvalidJsonChunkIs502) {
  auto run = generate_and_wait(backend(options()),
      R"({"messages":[{"role":"user","content":"hi"}],"user":"invalid_json"})");
  EXPECT_EQ(run.sink->completes(), 0);
  EXPECT_EQ(run.sink->error().status, 502);
  EXPECT_EQ(run.sink->error().type, "upstream_error");
  EXPECT_NE(run.sink->error().message.find("not valid JSON"), std::string::npos);
}

TEST_F(UpstreamBackendTest, MidStreamErrorObjectIs502WithItsMessage) {
  auto run = generate_and_wait(backend(options()),
      R"({"messages":[{"role":"user","content":"hi"}],"user":"sse_error"})");
  EXPECT_EQ(run.sink->error().status, 502);
  EXPECT_NE(run.sink->error().message.find("scripted mid-stream failure"), std::string::npos);
}

TEST_F(UpstreamBackendTest, IdleTimeoutBetweenChunksIs504) {
  UpstreamOptions o = options();
  o.idle_timeout = 300ms;
  auto run = generate_and_wait(backend(o),
      R"({"messages":[{"role":"user","content":"hi"}],"user":"delay_chunk_ms=2000"})");
  EXPECT_EQ(run.sink->completes(), 0);
  EXPECT_EQ(run.sink->error().status, 504);
  EXPECT_EQ(run.sink->error().code, "idle_timeout");
}

TEST_F(UpstreamBackendTest, ClientErrorsPassThrough) {
  auto run = generate_and_wait(backend(options()),
      R"({"messages":[{"role":"user","content":"hi"}],"user":"status=400,param=temperature,message=temperature too hot"})");
  EXPECT_EQ(run.sink->error().status, 400);
  EXPECT_EQ(run.sink->error().param, "temperature");
  EXPECT_EQ(run.sink->error().message, "temperature too hot");
  run = generate_and_wait(backend(options()),
      R"({"messages":[{"role":"user","content":"hi"}],"user":"status=401"})");
  EXPECT_EQ(run.sink->error().status, 401);
  EXPECT_EQ(run.sink->error().code, "invalid_api_key");
}

TEST_F(UpstreamBackendTest, OversizedResponseIs502) {
  UpstreamOptions o = options();
  o.max_response_bytes = 500;
  auto run = generate_and_wait(backend(o),
      R"({"messages":[{"role":"user","content":"hi"}],"user":"words=50"})");
  EXPECT_EQ(run.sink->completes(), 0);
  EXPECT_EQ(run.sink->error().status, 502);
  EXPECT_EQ(run.sink->error().code, "response_too_large");
}

TEST_F(UpstreamBackendTest, ManyConcurrentGenerations) {
  UpstreamBackend& b = backend(options());
  std::vector<Run> runs;
  for (int i = 0; i < 40; ++i)
    runs.push_back(generate(b, R"({"messages":[{"role":"user","content":"hi"}],"user":"delay_chunk_ms=5"})",
                            static_cast<uint64_t>(i)));
  for (int i = 0; i < 40; ++i) {
    ASSERT_TRUE(runs[i].sink->wait_end());
    EXPECT_EQ(runs[i].sink->completes(), 1) << runs[i].sink->error().message;
    EXPECT_EQ(runs[i].sink->text(0),
              "seed=" + std::to_string(i) + " choice=0 model=scripted-model echo: hi");
    EXPECT_FALSE(runs[i].sink->overlapped());
  }
  EXPECT_EQ(server_.count("total"), 40);
}

TEST_F(UpstreamBackendTest, ConstructionRefusesHttpsAndBadUrls) {
  UpstreamOptions o;
  o.url = "https://api.openai.com/v1";
  try {
    UpstreamBackend b(o, ioc_);
    FAIL() << "https accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("https"), std::string::npos);
  }
  o.url = "localhost:8000";
  EXPECT_THROW(UpstreamBackend(o, ioc_), std::invalid_argument);
}

TEST_F(UpstreamBackendTest, ModelsAndDefaults) {
  UpstreamOptions o = options();
  EXPECT_EQ(backend(o).resolve_model(""), std::nullopt);
  EXPECT_TRUE(backend(o).models().empty());
  o.default_model = "served";
  o.default_max_tokens = 123;
  UpstreamBackend& b = backend(o);
  EXPECT_EQ(b.resolve_model(""), "served");
  EXPECT_EQ(b.resolve_model("other"), "other");
  ASSERT_EQ(b.models().size(), 1u);
  EXPECT_EQ(b.models()[0].id, "served");
  EXPECT_EQ(b.fingerprint("x"), "fp_configured");
  EXPECT_EQ(b.default_max_tokens("x"), 123);
  EXPECT_FALSE(b.check_supported(api::ChatRequest{}));
}

http::request<http::string_body> echo_request(const std::string& target) {
  http::request<http::string_body> req{http::verb::post, target, 11};
  req.set(http::field::host, "client-facing-host");
  req.set(http::field::connection, "keep-alive, x-hop");
  req.set("x-hop", "dropped");
  req.set("x-custom", "kept");
  req.set(http::field::authorization, "Bearer client-key");
  req.set(http::field::content_type, "text/plain");
  req.body() = "payload";
  req.prepare_payload();
  return req;
}

TEST_F(UpstreamBackendTest, ForwardPassesRequestAndResponseThrough) {
  auto res = forward(backend(options("/v1")), echo_request("/echo/x?y=1"));
  EXPECT_EQ(res.result_int(), 200u);
  EXPECT_EQ(res["x-scripted"], "echo");
  EXPECT_EQ(res.count(http::field::transfer_encoding), 0u);
  EXPECT_EQ(res.count(http::field::connection), 0u);
  json::Value echo = parse(res.body());
  EXPECT_EQ(str(echo.find("path")), "/echo/x?y=1");
  EXPECT_EQ(str(echo.find("body")), "payload");
  const json::Value* h = echo.find("headers");
  EXPECT_EQ(str(h->find("x-custom")), "kept");
  EXPECT_EQ(h->find("x-hop"), nullptr);
  EXPECT_EQ(str(h->find("authorization")), "Bearer client-key");
  EXPECT_EQ(str(h->find("host")), "127.0.0.1:" + std::to_string(server_.port()));
  EXPECT_EQ(res[http::field::content_length], std::to_string(res.body().size()));
}

TEST_F(UpstreamBackendTest, ForwardReplacesAuthorizationWithTheApiKey) {
  UpstreamOptions o = options();
  o.api_key = "sk-upstream";
  auto res = forward(backend(o), echo_request("/echo"));
  json::Value echo = parse(res.body());
  EXPECT_EQ(str(echo.find("headers")->find("authorization")), "Bearer sk-upstream");
}

TEST_F(UpstreamBackendTest, ForwardKeepsUpstreamErrorStatuses) {
  auto res = forward(backend(options()), echo_request("/nowhere"));
  EXPECT_EQ(res.result_int(), 404u);
  EXPECT_NE(res.body().find("no route"), std::string::npos);
  res = forward(backend(options()), echo_request("/echo?status=503"));
  EXPECT_EQ(res.result_int(), 503u);
}

TEST_F(UpstreamBackendTest, ForwardTimeoutAndRefusalAreJsonErrors) {
  UpstreamOptions o = options();
  o.first_byte_timeout = 200ms;
  auto res = forward(backend(o), echo_request("/echo?delay_ms=2000"));
  EXPECT_EQ(res.result_int(), 504u);
  EXPECT_EQ(res[http::field::content_type], "application/json");
  EXPECT_EQ(str(parse(res.body()).find("error")->find("type")), "upstream_timeout");

  UpstreamOptions refused = options();
  refused.url = "http://127.0.0.1:" + std::to_string(closed_port());
  res = forward(backend(refused), echo_request("/echo"));
  EXPECT_EQ(res.result_int(), 502u);
  EXPECT_NE(str(parse(res.body()).find("error")->find("message")).find(refused.url),
            std::string::npos);
}

}  // namespace
}  // namespace reprox::testing
