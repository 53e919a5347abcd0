// The conformance suite run against UpstreamBackend talking to the scripted
// upstream (tests/proxy/backend/scripted_upstream.js).
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include <thread>

#include "proxy/backend/upstream_backend.hpp"
#include "tests/proxy/backend/conformance/backend_conformance.hpp"
#include "tests/proxy/backend/scripted_server.hpp"

namespace reprox::testing {
namespace {

using namespace std::chrono_literals;
using backend::UpstreamBackend;
using backend::UpstreamOptions;

class UpstreamTarget : public ConformanceTarget {
 public:
  UpstreamTarget() : work_(boost::asio::make_work_guard(ioc_)) {
    for (int i = 0; i < 2; ++i) threads_.emplace_back([this] { ioc_.run(); });
    if (server_.port() == 0) return;
    normal_ = std::make_unique<UpstreamBackend>(options(server_.url(), 5s), ioc_);
    hasty_ = std::make_unique<UpstreamBackend>(options(server_.url(), 300ms), ioc_);
    refused_ = std::make_unique<UpstreamBackend>(
        options("http://127.0.0.1:" + std::to_string(closed_port()), 5s), ioc_);
  }
  ~UpstreamTarget() override {
    work_.reset();
    ioc_.stop();
    for (auto& t : threads_) t.join();
  }

  std::string setup_error() const override { return server_.error(); }

  Backend& backend(Scenario scenario) override {
    if (scenario == Scenario::first_byte_timeout) return *hasty_;
    if (scenario == Scenario::unreachable) return *refused_;
    return *normal_;
  }

  std::optional<BackendRequest> request_for(Scenario scenario, uint64_t seed) override {
    std::string directives;
    int64_t n = 1;
    switch (scenario) {
      case Scenario::normal: break;
      case Scenario::two_choices: n = 2; break;
      case Scenario::long_stream: directives = "words=300;delay_chunk_ms=20"; break;
      case Scenario::first_byte_timeout: directives = "delay_first_ms=3000"; break;
      case Scenario::cut_stream: directives = "cut_after=3"; break;
      case Scenario::server_error: directives = "status=500"; break;
      case Scenario::rate_limited: directives = "status=429"; break;
      case Scenario::unreachable: break;
    }
    BackendRequest request;
    request.model_id = "scripted-model";
    request.seed = seed;
    request.chat.n = n;
    json::Value message = json::Object{};
    message.set("role", "user");
    message.set("content", "tell me a story");
    json::Value raw = json::Object{};
    raw.set("messages", json::Value(json::Array{message}));
    raw.set("n", n);
    if (!directives.empty()) raw.set("user", directives);
    request.chat.raw = raw;
    return request;
  }

  std::optional<std::string> expected_text(const BackendRequest& request,
                                           uint32_t choice) const override {
    return "seed=" + std::to_string(request.seed) + " choice=" + std::to_string(choice) +
           " model=" + request.model_id + " echo: tell me a story";
  }

  std::optional<bool> generator_saw_cancel(std::chrono::milliseconds wait) override {
    auto deadline = std::chrono::steady_clock::now() + wait;
    while (std::chrono::steady_clock::now() < deadline) {
      if (server_.count("aborted") == 1) return true;
      std::this_thread::sleep_for(20ms);
    }
    return false;
  }

 private:
  static UpstreamOptions options(const std::string& url, std::chrono::milliseconds timeouts) {
    UpstreamOptions o;
    o.url = url;
    o.connect_timeout = 2s;
    o.first_byte_timeout = timeouts;
    o.idle_timeout = timeouts;
    o.fingerprint = "fp_test";
    return o;
  }

  ScriptedServer server_;
  boost::asio::io_context ioc_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  std::vector<std::thread> threads_;
  std::unique_ptr<UpstreamBackend> normal_, hasty_, refused_;
};

std::unique_ptr<ConformanceTarget> make_upstream_target() {
  return std::make_unique<UpstreamTarget>();
}

}  // namespace

INSTANTIATE_TEST_SUITE_P(Upstream, BackendConformance,
                         ::testing::Values(TargetParam{"upstream", &make_upstream_target}),
                         target_name);

}  // namespace reprox::testing
