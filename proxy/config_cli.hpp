// The configuration side of the command line: `reprox serve`'s flags that set
// configuration keys, the order defaults < file < environment < flags, and
// `reprox config check [FILE]`.
#pragma once

#include <CLI/CLI.hpp>
#include <deque>
#include <iosfwd>
#include <string>

#include "conf/config.hpp"

namespace reprox {

// The file read when none is named: conf/reprox.toml when it exists, else "".
std::string default_config_path();

// Defaults, then the file at `path` (none when empty), then the REPROX_*
// variables in `env`. Returns the Config; fills `ignored_env` with the
// REPROX_* names that name no key. Throws ConfigError.
Config load_config(const std::string& path, const EnvVars& env, std::vector<std::string>* ignored_env = nullptr);

// `serve`'s --config and the flags that set keys. A flag's value stays text
// until resolve(), which parses it as the environment's values are parsed
// (sizes and durations take units) and records "flag --name" as its source.
class ServeConfigFlags {
 public:
  void add_to(CLI::App& serve);
  // load_config(--config or default_config_path(), env), then the flags given.
  // Logs a warning per ignored REPROX_* variable. Throws ConfigError.
  Config resolve(const EnvVars& env) const;

 private:
  struct Flag {
    std::string name;  // "--cache-ttl"
    std::string key;   // "cache.ttl"
    std::string text;
    CLI::Option* option = nullptr;
  };
  CLI::Option* add_flag(CLI::App& serve, const std::string& name, const std::string& key, const std::string& type,
                        const std::string& help);

  std::string config_path_;
  std::deque<Flag> flags_;  // a deque: CLI11 keeps references to each text
};

// `reprox config check [FILE]`.
struct ConfigCheckCommand {
  CLI::App* check = nullptr;
  std::string path;
  void add_to(CLI::App& app);
};

// Loads `path` (default_config_path() when empty) and `env`; prints
// describe_config() on `out` and a warning per ignored REPROX_* variable on
// `err`, and returns 0; or prints the errors on `err` and returns 1.
int run_config_check(const std::string& path, const EnvVars& env, std::ostream& out, std::ostream& err);

}  // namespace reprox
