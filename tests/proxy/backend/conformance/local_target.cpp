// The embedded engine's local backend in the Backend conformance suite, on a
// tiny random Qwen3-shaped model made from a fixed seed.
#include <filesystem>

#include "proxy/backend/local_backend.hpp"
#include "engine/tiny/make_tiny_model.hpp"
#include "tests/proxy/backend/conformance/backend_conformance.hpp"

namespace reprox::testing {
namespace {

class LocalTarget final : public ConformanceTarget {
 public:
  LocalTarget() {
    dir_ = std::filesystem::temp_directory_path() / ("reprox-conformance-" + std::to_string(::getpid()));
    try {
      engine::TinyModelOptions t;
      t.out_dir = dir_.string();
      t.npm_fixtures_dir = REPROX_NPM_FIXTURES_DIR;
      engine::make_tiny_model(t);
      engine::EngineOptions o;
      o.model_dir = dir_.string();
      backend_ = std::make_unique<LocalBackend>(o);
    } catch (const std::exception& e) {
      error_ = e.what();
    }
  }
  ~LocalTarget() override {
    backend_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  std::string setup_error() const override { return error_; }
  Backend& backend(Scenario) override { return *backend_; }

  std::optional<BackendRequest> request_for(Scenario scenario, uint64_t seed) override {
    BackendRequest r;
    r.model_id = backend_->models().front().id;
    r.seed = seed;
    r.max_tokens = 16;
    api::ChatMessage m;
    m.role = "user";
    m.content = json::Value("tell me a story");
    r.chat.messages.push_back(m);
    switch (scenario) {
      case Scenario::normal: break;
      case Scenario::two_choices: r.chat.n = 2; break;
      case Scenario::long_stream:
        // Thousands of tokens, with the end-of-turn tokens forbidden.
        r.max_tokens = 3000;
        for (const char* eos : {"<|im_end|>", "<|endoftext|>"})
          if (auto id = backend_->engine().tokenizer()->token_to_id(eos)) r.chat.logit_bias.emplace_back(*id, -100.0);
        break;
      default: return std::nullopt;  // timeouts, cuts and upstream errors are an upstream's
    }
    return r;
  }

  std::optional<std::string> expected_text(const BackendRequest&, uint32_t) const override { return std::nullopt; }
  std::optional<bool> generator_saw_cancel(std::chrono::milliseconds) override { return std::nullopt; }

 private:
  std::filesystem::path dir_;
  std::unique_ptr<LocalBackend> backend_;
  std::string error_;
};

std::unique_ptr<ConformanceTarget> make_local_target() { return std::make_unique<LocalTarget>(); }

}  // namespace

INSTANTIATE_TEST_SUITE_P(Local, BackendConformance, ::testing::Values(TargetParam{"local", &make_local_target}),
                         target_name);

}  // namespace reprox::testing
