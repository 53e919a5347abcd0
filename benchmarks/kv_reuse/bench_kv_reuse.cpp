// Time to first token at turn k of a long conversation, with conversation KV
// reuse on and off. Each turn: the same messages go to an engine without
// reuse and to one with reuse, as 1-token requests (their latency is the
// TTFT: prefill of the uncached prompt + one sample); then the turn's real
// answer comes from the reuse engine and joins the history, so the reuse
// engine's cache holds what a live conversation's would.
//
//   reprox_bench_kv_reuse [--preset tiny|smollm2] [--history N] [--threads T]
//                         [--model DIR] [--reps R]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <future>
#include <string>
#include <vector>

#include "engine/runtime/engine.hpp"
#include "proxy/backend/local_backend.hpp"
#include "engine/tiny/make_tiny_model.hpp"

using namespace reprox;
using namespace reprox::engine;

namespace {

class Collect final : public GenerationSink {
 public:
  void on_event(GenEvent e) override { text += e.delta.content; }
  void on_complete(const Usage& u, const std::string&) override {
    usage = u;
    done.set_value(true);
  }
  void on_error(const api::ApiError& e) override {
    std::fprintf(stderr, "error: %s\n", e.to_json().c_str());
    done.set_value(false);
  }
  std::string text;
  Usage usage;
  std::promise<bool> done;
};

struct Result {
  double seconds = 0;
  Usage usage;
  std::string text;
};

Result ask(LocalBackend& b, const std::vector<api::ChatMessage>& messages, int64_t max_tokens) {
  auto r = std::make_shared<BackendRequest>();
  r->chat.messages = messages;
  r->chat.temperature = 0.8;
  r->model_id = b.models().front().id;
  r->seed = 7;
  r->max_tokens = max_tokens;
  r->tenant = "bench";
  auto sink = std::make_shared<Collect>();
  auto done = sink->done.get_future();
  api::ApiError err;
  const auto t0 = std::chrono::steady_clock::now();
  auto handle = b.generate(r, sink, &err);
  if (!handle || !done.get()) {
    std::fprintf(stderr, "request failed: %s\n", err.to_json().c_str());
    std::exit(1);
  }
  Result out;
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  out.usage = sink->usage;
  out.text = sink->text;
  return out;
}

api::ChatMessage message(const std::string& role, const std::string& content) {
  api::ChatMessage m;
  m.role = role;
  m.content = json::Value(content);
  return m;
}

std::string user_turn(int k) {
  return "Turn " + std::to_string(k) +
         ": please continue the story about the lighthouse keeper, the storm that kept the supply boat away for "
         "three weeks, the radio that only caught a distant station playing old songs, and the gull that learned to "
         "knock on the window at dawn. Keep the tone calm and the details concrete.";
}

}  // namespace

int main(int argc, char** argv) {
  std::string preset = "tiny", model_dir;
  int64_t history = 2000;
  int threads = 1, reps = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--preset") preset = value;
    else if (flag == "--history") history = std::stoll(value);
    else if (flag == "--threads") threads = std::stoi(value);
    else if (flag == "--model") model_dir = value;
    else if (flag == "--reps") reps = std::stoi(value);
    else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  std::string made;
  if (model_dir.empty()) {
    made = make_preset_model(preset, "bench-kv", 8192, REPROX_NPM_DIR);
    if (made.empty()) return 2;
    model_dir = made;
  }
  EngineOptions o;
  o.model_dir = model_dir;
  o.threads = threads;
  o.kv_budget_bytes = 0;
  LocalBackend plain(o);
  o.kv_budget_bytes = 1ll << 30;
  LocalBackend reuse(o);

  std::printf("model %s (%s), threads %d; TTFT = latency of a 1-token request, best of %d\n", model_dir.c_str(),
              preset.c_str(), threads, reps);
  std::printf("%4s %8s %8s %12s %12s %8s\n", "turn", "prompt", "cached", "ttft_off_ms", "ttft_on_ms", "ratio");
  std::vector<api::ChatMessage> messages{message("system", "You are a patient storyteller.")};
  double last_ratio = 0;
  for (int k = 1;; ++k) {
    messages.push_back(message("user", user_turn(k)));
    double off = 1e9, on = 1e9;
    Usage on_usage;
    for (int r = 0; r < reps; ++r) off = std::min(off, ask(plain, messages, 1).seconds);
    // The first reuse probe is the honest one (it reuses only the previous
    // turns); later repetitions would reuse this probe's own prompt too.
    Result probe = ask(reuse, messages, 1);
    on = probe.seconds;
    on_usage = probe.usage;
    last_ratio = off / on;
    std::printf("%4d %8lld %8lld %12.2f %12.2f %8.1f\n", k, static_cast<long long>(on_usage.prompt_tokens),
                static_cast<long long>(on_usage.cached_tokens), off * 1e3, on * 1e3, last_ratio);
    std::fflush(stdout);
    if (on_usage.prompt_tokens >= history) break;
    Result answer = ask(reuse, messages, 48);
    messages.push_back(message("assistant", answer.text));
  }
  std::printf("ratio at the last turn (history >= %lld tokens): %.1fx\n", static_cast<long long>(history), last_ratio);
  if (!made.empty()) std::filesystem::remove_all(made);
  return 0;
}
