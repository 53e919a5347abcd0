// reprox: wiring only. Each subcommand lives with its component.
#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <iostream>
#include <sstream>

#include "conf/config.hpp"
#include "proxy/config_cli.hpp"
#include "proxy/key_cli.hpp"
#include "proxy/serve.hpp"
#include "proxy/subcommands.hpp"

namespace {

int serve_with(const reprox::Config& config) { return reprox::run_serve(config, reprox::local_backend_factory()); }

// A ConfigError holds one problem per line.
void log_each_line(const std::string& text) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) spdlog::error("{}", line);
}

}  // namespace

int main(int argc, char** argv) {
  // Logs go to stderr; stdout belongs to subcommands' output.
  spdlog::set_default_logger(spdlog::stderr_color_mt("reprox"));
  CLI::App app{"reprox: a reproducible caching proxy for LLM chat (OpenAI Chat Completions API)"};
  app.require_subcommand(1);

  auto* serve = app.add_subcommand("serve", "Run the proxy");
  reprox::ServeConfigFlags serve_flags;
  serve_flags.add_to(*serve);

  auto* key = app.add_subcommand("key", "Print the canonical form and key of a chat request read on stdin");
  reprox::policy::KeyContext key_ctx;
  key_ctx.model_id = "";
  key->add_option("--model", key_ctx.model_id, "Resolved model id (default: the request's model)");
  key->add_option("--fingerprint", key_ctx.fingerprint, "system_fingerprint to key with");
  key->add_option("--tenant", key_ctx.tenant, "Tenant (hex SHA-256 of the bearer token)");
  key->add_option("--default-seed", key_ctx.default_seed, "Seed injected when the request has none");
  key->add_option("--max-tokens", key_ctx.effective_max_tokens, "Completion limit when the request gives none");
  key->add_flag("--other-fields", key_ctx.key_other_fields,
                "Key the body fields reprox does not know, as for an upstream");

  reprox::register_engine_subcommands(app);

  reprox::ConfigCheckCommand config_check;
  config_check.add_to(app);

  CLI11_PARSE(app, argc, argv);
  try {
    if (*serve) return serve_with(serve_flags.resolve(reprox::reprox_environment()));
    if (*config_check.check)
      return reprox::run_config_check(config_check.path, reprox::reprox_environment(), std::cout, std::cerr);
    if (*key) return reprox::run_key_cli(std::cin, std::cout, key_ctx);
    return reprox::run_engine_subcommand(app);
  } catch (const reprox::ConfigError& e) {
    log_each_line(e.what());
    return 1;
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return 1;
  }
}
