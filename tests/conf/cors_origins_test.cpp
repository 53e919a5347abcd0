// server.cors_origins: the key reaches Config from the file and the
// environment; cors_origins() gives the list (trimmed, lower case), and
// refuses what is not an origin, or "*" beside others, with the key's
// source. `reprox config check` reports the same error.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "conf/config.hpp"
#include "tests/conf/temp_toml.hpp"

namespace reprox {
namespace {

using Origins = std::vector<std::string>;

Origins origins_of(const std::string& text) {
  Config c;
  set_config_key(c, "server.cors_origins", text, "flag --cors-origins");
  return cors_origins(c);
}

std::string error_of(const std::string& text) {
  try {
    origins_of(text);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(ConfigCorsOrigins, OffByDefault) {
  Config c;
  EXPECT_EQ(c.cors_origins, "");
  EXPECT_EQ(cors_origins(c), Origins{});
  EXPECT_NE(describe_config(c).find("server.cors_origins = \"\""), std::string::npos);
}

TEST(ConfigCorsOrigins, ListsAreTrimmedAndLowerCased) {
  EXPECT_EQ(origins_of("*"), Origins{"*"});
  EXPECT_EQ(origins_of(" https://App.Example.com , http://localhost:3000,"),
            (Origins{"https://app.example.com", "http://localhost:3000"}));
  EXPECT_EQ(origins_of("http://[::1]:8080, http://[::1]"), (Origins{"http://[::1]:8080", "http://[::1]"}));
  EXPECT_EQ(origins_of(" , "), Origins{});
}

TEST(ConfigCorsOrigins, WhatIsNotAnOriginIsRefusedWithItsSource) {
  for (const char* bad : {"https://app.example/", "https://app.example/chat", "app.example", "ftp://app.example",
                          "https://", "https://app.example:port", "https://app.example:123456",
                          "https://user@app.example", "https://app.example?x=1"}) {
    const std::string err = error_of(bad);
    EXPECT_EQ(err.rfind("flag --cors-origins: server.cors_origins: \"", 0), 0u) << bad << ": " << err;
    EXPECT_NE(err.find("is not an origin"), std::string::npos) << bad << ": " << err;
  }
  EXPECT_EQ(error_of("*, https://app.example"),
            "flag --cors-origins: server.cors_origins: \"*\" allows every origin; give it alone");
}

TEST(ConfigCorsOrigins, KeyReachesConfigFromTheFileAndTheEnvironment) {
  TempToml file("[server]\ncors_origins = \"https://a.example\"\n");
  Config c;
  load_config_file(file.path, c);
  EXPECT_EQ(cors_origins(c), Origins{"https://a.example"});
  apply_env_overrides({{"REPROX_SERVER_CORS_ORIGINS", "https://b.example/x"}}, c);
  try {
    cors_origins(c);
    FAIL() << "a path is not an origin";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("env REPROX_SERVER_CORS_ORIGINS: server.cors_origins: ", 0), 0u) << e.what();
  }
}

}  // namespace
}  // namespace reprox
