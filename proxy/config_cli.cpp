// `reprox serve`'s configuration flags and `reprox config check`; see
// config_cli.hpp.
#include "proxy/config_cli.hpp"

#include <spdlog/spdlog.h>

#include <filesystem>
#include <ostream>

namespace reprox {

std::string default_config_path() {
  const std::string shipped = "conf/reprox.toml";
  return std::filesystem::exists(shipped) ? shipped : "";
}

Config load_config(const std::string& path, const EnvVars& env, std::vector<std::string>* ignored_env) {
  Config config;
  if (!path.empty()) load_config_file(path, config);
  std::vector<std::string> ignored = apply_env_overrides(env, config);
  if (ignored_env) *ignored_env = std::move(ignored);
  return config;
}

CLI::Option* ServeConfigFlags::add_flag(CLI::App& serve, const std::string& name, const std::string& key,
                                        const std::string& type, const std::string& help) {
  Flag& flag = flags_.emplace_back();
  flag.name = name;
  flag.key = key;
  flag.option = serve.add_option(name, flag.text, help + " [" + key + "]")->type_name(type);
  return flag.option;
}

void ServeConfigFlags::add_to(CLI::App& serve) {
  serve.add_option("--config", config_path_, "TOML config file (default: conf/reprox.toml when present)");
  add_flag(serve, "--listen", "server.listen", "HOST:PORT", "Address to listen on (port 0 picks a free one)");
  add_flag(serve, "--admin-listen", "admin.listen", "HOST:PORT",
           "Serve /metrics and the admin endpoints here only, not on --listen");
  add_flag(serve, "--model", "engine.model", "DIR", "Hugging Face model folder (default: the embedded tiny model)");
  add_flag(serve, "--upstream", "upstream.url", "URL", "Forward misses to this OpenAI-compatible server");
  add_flag(serve, "--redis", "cache.redis", "URL",
           "Shared cache tier: redis://[:password@]host:port[/db] or unix:///path");
  add_flag(serve, "--default-seed", "proxy.default_seed", "N", "Seed injected when a request has none");
  add_flag(serve, "--threads", "server.threads", "N", "I/O threads");
  add_flag(serve, "--engine-threads", "engine.threads", "N", "Engine intra-op threads (0: every core)");
  add_flag(serve, "--device", "engine.device", "TEXT", "Engine device: cpu or cuda")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  add_flag(serve, "--numeric-mode", "engine.numeric_mode", "TEXT",
           "strict (exact: same bytes with or without KV reuse, at any batch) or fast (libtorch)")
      ->check(CLI::IsMember({"strict", "fast"}));
  add_flag(serve, "--weights", "engine.weights", "TEXT",
           "Weight storage in strict mode: auto (the checkpoint's dtype), f32, f16, bf16 or q8 (8-bit, blocks of 32)")
      ->check(CLI::IsMember({"auto", "f32", "f16", "bf16", "q8"}));
  add_flag(serve, "--dtype", "engine.dtype", "TEXT",
           "Compute dtype: auto (bfloat16 on cuda in fast mode, else float32), float32, bfloat16 or float16 "
           "(16-bit needs --numeric-mode fast)")
      ->check(CLI::IsMember({"auto", "float32", "bfloat16", "float16"}));
  add_flag(serve, "--cache-bytes", "cache.bytes", "SIZE", "Memory tier budget, e.g. 256MiB or 2GB");
  add_flag(serve, "--cache-ttl", "cache.ttl", "DURATION", "Cache TTL: seconds, or e.g. 90s, 15m, 24h, 1h30m");
  add_flag(serve, "--hot-hits", "cache.hot_hits", "N", "Hits within --hot-window that extend an entry's TTL (0: off)");
  add_flag(serve, "--hot-window", "cache.hot_window", "DURATION", "Window for --hot-hits: seconds, or e.g. 1h");
  add_flag(serve, "--kv-budget", "engine.kv_budget", "SIZE", "KV kept for reuse across requests, e.g. 512MiB (0: off)");
  add_flag(serve, "--max-batch-size", "engine.max_batch_size", "N", "Sequences per engine pass (continuous batching)");
  add_flag(serve, "--working-kv", "engine.working_kv", "SIZE", "KV of running sequences before preemption, e.g. 1GiB");
  add_flag(serve, "--admin-token", "proxy.admin_token", "TOKEN", "Bearer token for /reprox/v1/purge");
  add_flag(serve, "--audit-every", "audit.every", "N",
           "Generate one cache hit in N again in the background and compare (reprox_repro_audits_total); 0: off");
  add_flag(serve, "--audit-log", "log.audit", "PATH", "Audit log: one JSON line per chat request (empty: off)");
  add_flag(serve, "--max-connections", "server.max_connections", "N", "Connection cap");
  add_flag(serve, "--drain-timeout-ms", "server.drain_timeout_ms", "DURATION",
           "How long in-flight answers get on shutdown: milliseconds, or e.g. 30s");
  add_flag(serve, "--read-timeout-ms", "server.read_timeout_ms", "DURATION",
           "A request not received in time gets 408: milliseconds, or e.g. 30s");
  add_flag(serve, "--cors-origins", "server.cors_origins", "LIST",
           "Browser origins that may call the API: \"*\" or e.g. https://app.example.com,http://localhost:3000");
  add_flag(serve, "--body-limit", "server.body_limit", "SIZE", "Largest request body, e.g. 1MiB (413 beyond)");
}

Config ServeConfigFlags::resolve(const EnvVars& env) const {
  std::vector<std::string> ignored;
  Config config = load_config(config_path_.empty() ? default_config_path() : config_path_, env, &ignored);
  for (const auto& name : ignored) spdlog::warn("{} names no configuration key; ignored", name);
  for (const Flag& flag : flags_)
    if (flag.option->count() > 0) set_config_key(config, flag.key, flag.text, "flag " + flag.name);
  cors_origins(config);  // a malformed origin stops start-up here, with its source
  return config;
}

void ConfigCheckCommand::add_to(CLI::App& app) {
  auto* config = app.add_subcommand("config", "Inspect the configuration");
  config->require_subcommand(1);
  check = config->add_subcommand("check",
                                 "Load the file and the REPROX_* environment; print every key's effective value "
                                 "and its source, or the errors (exit 1)");
  check->add_option("FILE", path, "TOML config file (default: conf/reprox.toml when present)");
}

int run_config_check(const std::string& path, const EnvVars& env, std::ostream& out, std::ostream& err) {
  std::vector<std::string> ignored;
  Config config;
  try {
    config = load_config(path.empty() ? default_config_path() : path, env, &ignored);
  } catch (const ConfigError& e) {
    err << e.what() << '\n';
    return 1;
  }
  for (const auto& name : ignored) err << "warning: " << name << " names no configuration key; ignored\n";
  try {
    resolve_engine_dtype(config);
    check_engine_kv_slots(config);
    cors_origins(config);
  } catch (const ConfigError& e) {
    err << e.what() << '\n';
    return 1;
  }
  out << describe_config(config);
  return 0;
}

}  // namespace reprox
