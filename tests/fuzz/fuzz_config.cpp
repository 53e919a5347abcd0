// Fuzz target: the TOML configuration loader (load_config_file, from a
// private temporary file) and the key setter used for REPROX_* variables
// and flags. The first input byte picks one: even, the rest is the file;
// odd, the rest is "section.key\nvalue".
// Properties: any content gives a Config or a ConfigError (an error at
// start-up), never a crash or another exception; an accepted file's
// effective configuration can be described; server.cors_origins set by a
// flag gives origins or an error.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "conf/config.hpp"
#include "tests/fuzz/fuzz_check.hpp"

namespace {

std::string g_path;  // the configuration file

void check_file(const uint8_t* data, size_t size) {
  {
    std::ofstream out(g_path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  reprox::Config config;
  try {
    reprox::load_config_file(g_path, config);
  } catch (const reprox::ConfigError& e) {
    FUZZ_CHECK(e.what()[0] != '\0', "a configuration error explains itself");
    return;
  }
  FUZZ_CHECK(!reprox::describe_config(config).empty(), "an accepted configuration describes itself");
}

void check_key(const std::string& input) {
  const size_t newline = input.find('\n');
  const std::string key = input.substr(0, newline);
  const std::string value = newline == std::string::npos ? "" : input.substr(newline + 1);
  reprox::Config config;
  try {
    reprox::set_config_key(config, key, value, "flag --fuzz");
  } catch (const reprox::ConfigError&) {
    return;
  }
  reprox::describe_config(config);
  try {
    for (const auto& origin : reprox::cors_origins(config))
      FUZZ_CHECK(origin == "*" || origin.rfind("http://", 0) == 0 || origin.rfind("https://", 0) == 0,
                 "an accepted CORS origin is * or an http(s) origin");
  } catch (const reprox::ConfigError& e) {
    FUZZ_CHECK(e.what()[0] != '\0', "a CORS origin error explains itself");
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  char tmpl[] = "/tmp/reprox-fuzz-config-XXXXXX";
  const int fd = mkstemp(tmpl);
  if (fd < 0) std::abort();
  close(fd);
  g_path = tmpl;
  std::atexit([] { std::remove(g_path.c_str()); });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  if (data[0] % 2 == 0)
    check_file(data + 1, size - 1);
  else
    check_key(std::string(reinterpret_cast<const char*>(data) + 1, size - 1));
  return 0;
}
