// `reprox config check FILE`, run as the built binary: a good file and the
// environment print every key with its source (exit 0); an unknown key, a
// bad size and a 16-bit engine.dtype in strict mode print errors naming
// where the values came from on stderr (exit 1), and `reprox serve` stops at
// start-up with the dtype error too.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/conf/temp_toml.hpp"

namespace reprox {
namespace {

struct CheckRun {
  int status = -1;
  std::string out, err;
};

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs `env_prefix reprox args`, capturing stdout and stderr.
CheckRun run_reprox(const std::string& args, const std::string& env_prefix = "") {
  TempToml out(""), err("");
  const std::string command =
      env_prefix + " '" + REPROX_BINARY + "' " + args + " >'" + out.path + "' 2>'" + err.path + "'";
  CheckRun run;
  const int raw = std::system(command.c_str());
  run.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  run.out = read_all(out.path);
  run.err = read_all(err.path);
  return run;
}

// Runs `env_prefix reprox config check file`.
CheckRun config_check(const std::string& file, const std::string& env_prefix = "") {
  return run_reprox("config check '" + file + "'", env_prefix);
}

TEST(ConfigCheck, PrintsEffectiveValuesAndSources) {
  TempToml file("[cache]\nttl = \"1h\"\nbytes = \"64MiB\"\n\n[[cache.rule]]\nnamespace = \"faq\"\nttl = \"24h\"\n");
  CheckRun run = config_check(file.path, "REPROX_SERVER_LISTEN=127.0.0.1:9000 REPROX_NO_SUCH_KEY=1");
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("cache.bytes = 67108864"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("# " + file.path + ":3\n"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("server.listen = \"127.0.0.1:9000\""), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("# env REPROX_SERVER_LISTEN\n"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("cache.hot_hits = 20"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("namespace = \"faq\""), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("# " + file.path + ":5\n"), std::string::npos) << run.out;
  EXPECT_NE(run.err.find("REPROX_NO_SUCH_KEY"), std::string::npos) << run.err;
}

TEST(ConfigCheck, UnknownKeyAndBadSizeNameTheirLines) {
  TempToml file("[cache]\nttl = 60\ntll = 5\n[engine]\nkv_budget = \"16QB\"\n");
  CheckRun run = config_check(file.path);
  EXPECT_EQ(run.status, 1);
  EXPECT_NE(run.err.find(file.path + ":3: unknown key cache.tll"), std::string::npos) << run.err;
  EXPECT_NE(
      run.err.find(file.path + ":5: engine.kv_budget: bad size '16QB' (units: B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)"),
      std::string::npos)
      << run.err;
  EXPECT_EQ(run.out, "");
}

TEST(ConfigCheck, BadEnvironmentValueNamesTheVariable) {
  TempToml file("[cache]\nttl = 60\n");
  CheckRun run = config_check(file.path, "REPROX_CACHE_TTL=soon");
  EXPECT_EQ(run.status, 1);
  EXPECT_NE(run.err.find("env REPROX_CACHE_TTL: cache.ttl: bad duration 'soon'"), std::string::npos) << run.err;
}

TEST(ConfigCheck, EngineDtypeFromTheEnvironment) {
  TempToml file("[engine]\nnumeric_mode = \"fast\"\n");
  CheckRun run = config_check(file.path, "REPROX_ENGINE_DTYPE=bfloat16");
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("engine.dtype = \"bfloat16\""), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("# env REPROX_ENGINE_DTYPE\n"), std::string::npos) << run.out;
}

TEST(ConfigCheck, SixteenBitDtypeInStrictModeIsAnError) {
  TempToml file("[engine]\nnumeric_mode = \"strict\"\n");
  CheckRun run = config_check(file.path, "REPROX_ENGINE_DTYPE=float16");
  EXPECT_EQ(run.status, 1);
  EXPECT_NE(run.err.find("env REPROX_ENGINE_DTYPE: engine.dtype \"float16\" needs engine.numeric_mode \"fast\", "
                         "but engine.numeric_mode is \"strict\" (" + file.path + ":2)"),
            std::string::npos)
      << run.err;
  EXPECT_EQ(run.out, "");
}

TEST(ConfigCheck, MalformedCorsOriginNamesItsLine) {
  TempToml file("[server]\ncors_origins = \"https://app.example/\"\n");
  CheckRun run = config_check(file.path);
  EXPECT_EQ(run.status, 1);
  EXPECT_NE(run.err.find(file.path + ":2: server.cors_origins: \"https://app.example/\" is not an origin"),
            std::string::npos)
      << run.err;
}

#if REPROX_WITH_TORCH
// serve stops before loading any model, with the same one-line error.
TEST(ConfigCheck, ServeRefusesSixteenBitDtypeInStrictMode) {
  TempToml file("# empty\n");
  CheckRun run = run_reprox("serve --config '" + file.path + "' --listen 127.0.0.1:0 --dtype bfloat16", "timeout 60");
  EXPECT_EQ(run.status, 1) << run.err;
  EXPECT_NE(run.err.find("flag --dtype: engine.dtype \"bfloat16\" needs engine.numeric_mode \"fast\", but "
                         "engine.numeric_mode is \"strict\" (default); strict mode computes in float32 only"),
            std::string::npos)
      << run.err;
}
#endif

}  // namespace
}  // namespace reprox
