// reprox: wiring only. Each subcommand lives with its component.
#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <iostream>

#include "conf/config.hpp"
#include "proxy/key_cli.hpp"
#include "proxy/serve.hpp"
#include "proxy/subcommands.hpp"

int main(int argc, char** argv) {
  using reprox::Config;
  // Logs go to stderr; stdout belongs to subcommands' output.
  spdlog::set_default_logger(spdlog::stderr_color_mt("reprox"));
  CLI::App app{"reprox: a reproducible caching proxy for LLM chat (OpenAI Chat Completions API)"};
  app.require_subcommand(1);

  Config config;
  std::string config_path;
  auto* serve = app.add_subcommand("serve", "Run the proxy");
  serve->add_option("--config", config_path, "TOML config file (default: conf/reprox.toml when present)");
  serve->add_option("--listen", config.listen, "HOST:PORT to listen on (port 0 picks a free one)");
  serve->add_option("--model", config.model, "Hugging Face model folder (default: the embedded tiny model)");
  serve->add_option("--upstream", config.upstream, "Forward misses to this OpenAI-compatible server (http://host:port)");
  serve->add_option("--redis", config.redis, "Shared cache tier: redis://[:password@]host:port[/db] or unix:///path");
  serve->add_option("--default-seed", config.default_seed, "Seed injected when a request has none");
  serve->add_option("--threads", config.threads, "I/O threads");
  serve->add_option("--engine-threads", config.engine_threads, "Engine intra-op threads");
  serve->add_option("--device", config.device, "cpu or cuda")->check(CLI::IsMember({"cpu", "cuda"}));
  serve->add_option("--numeric-mode", config.numeric_mode,
                    "strict (exact: same bytes with or without KV reuse, at any batch) or fast (libtorch)")
      ->check(CLI::IsMember({"strict", "fast"}));
  serve->add_option("--cache-bytes", config.cache_bytes, "Memory tier budget in bytes");
  serve->add_option("--cache-ttl", config.cache_ttl, "Cache TTL in seconds");
  serve->add_option("--kv-budget", config.kv_budget, "Bytes of KV kept for reuse across requests (0: off)");
  serve->add_option("--max-batch-size", config.max_batch_size, "Sequences per engine pass (continuous batching)");
  serve->add_option("--working-kv", config.working_kv, "KV bytes of running sequences before preemption");
  serve->add_option("--admin-token", config.admin_token, "Bearer token for /reprox/v1/purge");
  serve->add_option("--audit-every", config.audit_every,
                    "Generate one cache hit in N again in the background and compare (reprox_repro_audits_total); 0: off")
      ->check(CLI::NonNegativeNumber);
  serve->add_option("--max-connections", config.max_connections, "Connection cap");
  serve->add_option("--drain-timeout-ms", config.drain_timeout_ms, "How long in-flight answers get on shutdown");
  serve->add_option("--read-timeout-ms", config.read_timeout_ms, "A request not received in time gets 408");
  serve->add_option("--body-limit", config.body_limit, "Largest request body in bytes (413 beyond)");

  auto* key = app.add_subcommand("key", "Print the canonical form and key of a chat request read on stdin");
  reprox::policy::KeyContext key_ctx;
  key_ctx.model_id = "";
  key->add_option("--model", key_ctx.model_id, "Resolved model id (default: the request's model)");
  key->add_option("--fingerprint", key_ctx.fingerprint, "system_fingerprint to key with");
  key->add_option("--tenant", key_ctx.tenant, "Tenant (hex SHA-256 of the bearer token)");
  key->add_option("--default-seed", key_ctx.default_seed, "Seed injected when the request has none");
  key->add_option("--max-tokens", key_ctx.effective_max_tokens, "Completion limit when the request gives none");

  reprox::register_engine_subcommands(app);

  try {
    // Flags override the file: load the file first, then let CLI11 write
    // the flags over it.
    if (argc > 1 && std::string(argv[1]) == "serve") {
      std::string path;
      for (int i = 2; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--config" && i + 1 < argc) path = argv[i + 1];
        else if (a.rfind("--config=", 0) == 0) path = a.substr(9);
      }
      if (path.empty() && std::filesystem::exists("conf/reprox.toml")) path = "conf/reprox.toml";
      if (!path.empty()) reprox::load_config_file(path, config);
    }
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return 1;
  }
  CLI11_PARSE(app, argc, argv);
  try {
    if (*serve) return reprox::run_serve(config, reprox::local_backend_factory());
    if (*key) return reprox::run_key_cli(std::cin, std::cout, key_ctx);
    return reprox::run_engine_subcommand(app);
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return 1;
  }
}
