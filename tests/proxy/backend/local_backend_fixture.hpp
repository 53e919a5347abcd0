// A LocalBackend on the tiny Qwen3-shaped model, shared by a test suite,
// and helpers to send it requests.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>

#include "engine/tiny/make_tiny_model.hpp"
#include "proxy/backend/local_backend.hpp"
#include "tests/support/collect_sink.hpp"

namespace reprox::engine {

using Collect = testing_support::CollectSink;

class LocalBackendTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(make_preset_model("tiny", "local", 96, REPROX_NPM_FIXTURES_DIR));
    EngineOptions o;
    o.model_dir = *dir_;
    o.queue_capacity = 2;
    backend_ = new LocalBackend(o);
  }
  static void TearDownTestSuite() {
    delete backend_;
    std::filesystem::remove_all(*dir_);
    delete dir_;
  }

  static std::shared_ptr<BackendRequest> request(const std::string& text, int64_t max_tokens = 12) {
    auto r = std::make_shared<BackendRequest>();
    api::ChatMessage m;
    m.role = "user";
    m.content = json::Value(text);
    r->chat.messages.push_back(m);
    r->model_id = backend_->models().front().id;
    r->seed = 42;
    r->max_tokens = max_tokens;
    return r;
  }

  static std::shared_ptr<Collect> run(std::shared_ptr<BackendRequest> r) {
    auto sink = std::make_shared<Collect>();
    auto done = sink->done.get_future();
    api::ApiError err;
    auto handle = backend_->generate(r, sink, &err);
    EXPECT_TRUE(handle) << err.to_json();
    if (handle) done.get();
    return sink;
  }

  static std::string* dir_;
  static LocalBackend* backend_;
};

inline std::string* LocalBackendTest::dir_ = nullptr;
inline LocalBackend* LocalBackendTest::backend_ = nullptr;

}  // namespace reprox::engine
