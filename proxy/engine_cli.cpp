// The engine's subcommands (generate, tokenize, make-tiny-model) and the
// local backend factory for `serve`; see proxy/subcommands.hpp.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <future>
#include <iostream>
#include <thread>
#include <utility>

#include "proxy/backend/local_backend.hpp"
#include "engine/tiny/make_tiny_model.hpp"
#include "engine/tokenizer/tokenize_cli.hpp"
#include "proxy/subcommands.hpp"

namespace reprox {

namespace {

struct EngineCli {
  CLI::App* generate = nullptr;
  CLI::App* tokenize = nullptr;
  CLI::App* make_tiny = nullptr;
  // generate
  std::string model;
  std::string prompt;
  uint64_t seed = 42;
  double temperature = 1.0, top_p = 1.0;
  int64_t top_k = 0, max_tokens = 64;
  int threads = 1;
  std::string weights = "auto";
  std::string device = "cpu", numeric_mode = "strict", dtype = "auto";
  // tokenize
  bool special = false;
  // make-tiny-model
  engine::TinyModelOptions tiny;
};

EngineCli& cli() {
  static EngineCli c;
  return c;
}

// Prints deltas as they come and waits for the end.
class PrintingSink final : public GenerationSink {
 public:
  void on_event(GenEvent e) override {
    std::cout << e.delta.content << std::flush;
    if (!e.finish_reason.empty()) finish_ = e.finish_reason;
  }
  void on_complete(const Usage& u, const std::string& fp) override {
    std::cout << "\n";
    std::cerr << "finish_reason=" << finish_ << " prompt_tokens=" << u.prompt_tokens
              << " completion_tokens=" << u.completion_tokens << " system_fingerprint=" << fp << "\n";
    done_.set_value(0);
  }
  void on_error(const api::ApiError& e) override {
    std::cerr << e.to_json() << "\n";
    done_.set_value(1);
  }
  std::future<int> done() { return done_.get_future(); }

 private:
  std::string finish_;
  std::promise<int> done_;
};

// engine.threads, with 0 meaning every core.
int engine_threads(const Config& config) {
  if (config.engine_threads > 0) return config.engine_threads;
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

// The engine settings of `generate` as engine.* keys, so that its dtype
// resolves, and fails, as `serve`'s does.
Config generate_engine_config(const EngineCli& c) {
  Config config;
  config.device = c.device;
  config.numeric_mode = c.numeric_mode;
  config.dtype = c.dtype;
  for (const auto& [flag, key] : {std::pair<const char*, const char*>{"--device", "engine.device"},
                                  {"--numeric-mode", "engine.numeric_mode"},
                                  {"--dtype", "engine.dtype"}})
    if (c.generate->count(flag) > 0) config.sources[key] = std::string("flag ") + flag;
  return config;
}

int run_generate(const EngineCli& c) {
  const Config config = generate_engine_config(c);
  engine::EngineOptions o;
  o.model_dir = c.model;
  o.threads = c.threads;
  o.weights = c.weights;
  o.device = config.device;
  o.numeric_mode = config.numeric_mode;
  o.dtype = resolve_engine_dtype(config);
  LocalBackend backend(o);
  auto req = std::make_shared<BackendRequest>();
  api::ChatMessage m;
  m.role = "user";
  m.content = json::Value(c.prompt);
  req->chat.messages.push_back(m);
  req->chat.temperature = c.temperature;
  req->chat.top_p = c.top_p;
  req->chat.top_k = c.top_k;
  req->model_id = backend.models().front().id;
  req->seed = c.seed;
  req->max_tokens = c.max_tokens;
  auto sink = std::make_shared<PrintingSink>();
  auto done = sink->done();
  api::ApiError err;
  auto handle = backend.generate(req, sink, &err);
  if (!handle) {
    std::cerr << err.to_json() << "\n";
    return 1;
  }
  return done.get();
}

}  // namespace

void register_engine_subcommands(CLI::App& app) {
  auto& c = cli();
  c.tiny.npm_fixtures_dir = REPROX_NPM_FIXTURES_DIR;
  c.generate = app.add_subcommand("generate", "One generation on the terminal, for debugging a model");
  c.generate->add_option("--model", c.model, "Hugging Face model folder")->required();
  c.generate->add_option("--prompt", c.prompt, "The user message")->required();
  c.generate->add_option("--seed", c.seed, "Sampling seed");
  c.generate->add_option("--temperature", c.temperature, "0 = greedy");
  c.generate->add_option("--top-p", c.top_p, "Nucleus sampling mass");
  c.generate->add_option("--top-k", c.top_k, "Keep the k most likely tokens (0 = off)");
  c.generate->add_option("--max-tokens", c.max_tokens, "Completion limit");
  c.generate->add_option("--engine-threads", c.threads, "Intra-op threads");
  c.generate->add_option("--weights", c.weights, "Weight storage: auto | f32 | f16 | bf16 | q8")
      ->check(CLI::IsMember({"auto", "f32", "f16", "bf16", "q8"}));
  c.generate->add_option("--device", c.device, "cpu or cuda")->check(CLI::IsMember({"cpu", "cuda"}));
  c.generate->add_option("--numeric-mode", c.numeric_mode, "strict or fast")
      ->check(CLI::IsMember({"strict", "fast"}));
  c.generate->add_option("--dtype", c.dtype,
                         "Compute dtype: auto (bfloat16 on cuda in fast mode, else float32), float32, bfloat16 or "
                         "float16")
      ->check(CLI::IsMember({"auto", "float32", "bfloat16", "float16"}));

  c.tokenize = app.add_subcommand("tokenize", "Read one JSON string per line on stdin, print its token ids per line");
  c.tokenize->add_option("--model", c.model, "Model folder (tokenizer.json, or vocab.json + merges.txt)")->required();
  c.tokenize->add_flag("--special", c.special, "Parse special-token text into their ids");

  c.make_tiny = app.add_subcommand("make-tiny-model", "Write a small random model as a Hugging Face folder");
  auto& t = c.tiny;
  c.make_tiny->add_option("--out", t.out_dir, "Output folder")->required();
  c.make_tiny->add_option("--arch", t.arch, "llama | mistral | qwen2 | qwen3 | gpt2")
      ->check(CLI::IsMember({"llama", "mistral", "qwen2", "qwen3", "gpt2"}));
  c.make_tiny->add_option("--tokenizer", t.tokenizer_dir, "Tokenizer folder (default: the npm fixture for the arch)");
  c.make_tiny->add_option("--npm-dir", t.npm_fixtures_dir, "node_modules with the tokenizer packages");
  c.make_tiny->add_option("--seed", t.seed, "Weights seed");
  c.make_tiny->add_option("--hidden", t.hidden, "Hidden size");
  c.make_tiny->add_option("--layers", t.layers, "Layers");
  c.make_tiny->add_option("--heads", t.heads, "Attention heads");
  c.make_tiny->add_option("--kv-heads", t.kv_heads, "Key/value heads");
  c.make_tiny->add_option("--head-dim", t.head_dim, "Head size (0: hidden / heads)");
  c.make_tiny->add_option("--intermediate", t.intermediate, "MLP size");
  c.make_tiny->add_option("--vocab-size", t.vocab_size, "Vocabulary (0: the tokenizer's)");
  c.make_tiny->add_option("--max-positions", t.max_positions, "Context length");
  c.make_tiny->add_option("--dtype", t.dtype, "f32 | f16 | bf16")->check(CLI::IsMember({"f32", "f16", "bf16"}));
  c.make_tiny->add_flag("--llama3-rope", t.llama3_rope_scaling, "llama: add llama3 rope_scaling");
}

int run_engine_subcommand(CLI::App&) {
  auto& c = cli();
  if (*c.generate) return run_generate(c);
  if (*c.tokenize) return tok::run_tokenize_cli(c.model, c.special, std::cin, std::cout);
  if (*c.make_tiny) return engine::run_make_tiny_model(c.tiny);
  return 2;
}

LocalBackendFactory local_backend_factory() {
  return [](const Config& config) {
    engine::EngineOptions o;
    o.dtype = resolve_engine_dtype(config);  // a bad engine.dtype or kv_slots stops start-up before any model work
    check_engine_kv_slots(config);
    o.model_dir = config.model;
    if (o.model_dir.empty()) {
      // The embedded default: a tiny random Qwen3-shaped model with the real
      // Qwen3 tokenizer, made once from a fixed seed.
      o.model_dir = REPROX_DEFAULT_MODEL_DIR;
      if (!std::filesystem::exists(o.model_dir + "/config.json")) {
        spdlog::info("making the embedded tiny model in {}", o.model_dir);
        engine::TinyModelOptions t;
        t.out_dir = o.model_dir;
        t.npm_fixtures_dir = REPROX_NPM_FIXTURES_DIR;
        engine::make_tiny_model(t);
      }
    }
    o.device = config.device;
    o.numeric_mode = config.numeric_mode;
    o.weights = config.weights;
    o.threads = engine_threads(config);
    o.default_max_tokens = config.default_max_tokens;
    o.kv_budget_bytes = static_cast<int64_t>(config.kv_budget);
    o.kv_block_size = config.kv_block_size;
    o.max_conversations_per_user = config.kv_conversations_per_user;
    o.max_batch_size = config.max_batch_size;
    o.max_step_tokens = config.max_step_tokens;
    o.prefill_chunk = config.prefill_chunk;
    o.working_kv_bytes = static_cast<int64_t>(std::min<uint64_t>(config.working_kv, uint64_t{1} << 62));
    o.kv_slots = config.kv_slots;
    o.cuda_graphs = config.cuda_graphs;
    o.queue_capacity = static_cast<size_t>(std::max<int64_t>(config.engine_queue, 1));
    // A share of 1 (the default) lets a tenant fill the queue.
    if (config.tenant_queue_share < 1.0)
      o.tenant_queue_limit = std::max<size_t>(1, size_t(config.tenant_queue_share * double(o.queue_capacity)));
    auto backend = std::make_unique<LocalBackend>(o);
    const engine::Engine& engine = backend->engine();
    if (engine.sliding_window() > 0) {
      spdlog::info("model {}: context capped at its sliding window, {} tokens (within it, attention is exact)",
                   engine.model_id(), engine.sliding_window());
    }
    LocalBackendParts parts;
    parts.text = backend.get();
    parts.before_scrape = [engine = &backend->engine()](Metrics& m) {
      auto k = engine->kv_counters();
      m.kv_state(double(k.bytes_held), double(k.cached_blocks), double(k.evictions), double(k.lookups), double(k.hits));
      const engine::BatchStats b = engine->batch_stats();
      m.batch_state(double(b.running), double(b.waiting), double(b.steps), double(b.rows), double(b.preemptions),
                    double(b.free_kv_slots), double(b.guide_mask_walks));
    };
    parts.backend = std::move(backend);
    return parts;
  };
}

}  // namespace reprox
