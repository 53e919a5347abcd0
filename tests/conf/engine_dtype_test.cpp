// engine.dtype: the key reaches Config from the file, the environment and a
// flag with its provenance; resolve_engine_dtype() turns "auto" into bfloat16
// on CUDA in fast mode and float32 otherwise, keeps explicit values, and
// refuses a 16-bit dtype in strict mode or an unknown name with an error that
// names the keys and where their values came from.
#include <gtest/gtest.h>

#include <string>

#include "conf/config.hpp"
#include "tests/conf/temp_toml.hpp"

namespace reprox {
namespace {

Config engine_config(const std::string& device, const std::string& numeric_mode, const std::string& dtype) {
  Config c;
  c.device = device;
  c.numeric_mode = numeric_mode;
  c.dtype = dtype;
  return c;
}

std::string resolve_error(const Config& c) {
  try {
    resolve_engine_dtype(c);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(ConfigEngineDtype, DefaultIsAuto) {
  Config c;
  EXPECT_EQ(c.dtype, "auto");
  EXPECT_EQ(resolve_engine_dtype(c), "float32");  // cpu, strict
  EXPECT_NE(describe_config(c).find("engine.dtype = \"auto\""), std::string::npos);
}

TEST(ConfigEngineDtype, KeyReachesConfigFromEachLayer) {
  TempToml file("[engine]\nnumeric_mode = \"fast\"\ndtype = \"float16\"\n");
  Config c;
  load_config_file(file.path, c);
  EXPECT_EQ(c.dtype, "float16");
  EXPECT_EQ(c.sources["engine.dtype"], file.path + ":3");
  EXPECT_EQ(resolve_engine_dtype(c), "float16");

  apply_env_overrides({{"REPROX_ENGINE_DTYPE", "bfloat16"}}, c);
  EXPECT_EQ(c.dtype, "bfloat16");
  EXPECT_EQ(c.sources["engine.dtype"], "env REPROX_ENGINE_DTYPE");

  set_config_key(c, "engine.dtype", "float32", "flag --dtype");
  EXPECT_EQ(c.dtype, "float32");
  EXPECT_EQ(c.sources["engine.dtype"], "flag --dtype");
  EXPECT_NE(describe_config(c).find("engine.dtype = \"float32\""), std::string::npos);
}

TEST(ConfigEngineDtype, AutoIsBfloat16OnCudaInFastModeOnly) {
  EXPECT_EQ(resolve_engine_dtype(engine_config("cpu", "strict", "auto")), "float32");
  EXPECT_EQ(resolve_engine_dtype(engine_config("cpu", "fast", "auto")), "float32");
  EXPECT_EQ(resolve_engine_dtype(engine_config("cuda", "fast", "auto")), "bfloat16");
  EXPECT_EQ(resolve_engine_dtype(engine_config("cuda:1", "fast", "auto")), "bfloat16");
  // Strict mode is always float32 (the engine then refuses strict on CUDA).
  EXPECT_EQ(resolve_engine_dtype(engine_config("cuda", "strict", "auto")), "float32");
}

TEST(ConfigEngineDtype, ExplicitValuesStay) {
  EXPECT_EQ(resolve_engine_dtype(engine_config("cpu", "fast", "bfloat16")), "bfloat16");
  EXPECT_EQ(resolve_engine_dtype(engine_config("cpu", "fast", "float16")), "float16");
  EXPECT_EQ(resolve_engine_dtype(engine_config("cuda", "fast", "float32")), "float32");
  EXPECT_EQ(resolve_engine_dtype(engine_config("cpu", "strict", "float32")), "float32");
}

TEST(ConfigEngineDtype, SixteenBitInStrictModeNamesBothKeysAndSources) {
  Config c;
  set_config_key(c, "engine.dtype", "bfloat16", "flag --dtype");
  EXPECT_EQ(resolve_error(c),
            "flag --dtype: engine.dtype \"bfloat16\" needs engine.numeric_mode \"fast\", but engine.numeric_mode is "
            "\"strict\" (default); strict mode computes in float32 only");

  TempToml file("[engine]\nnumeric_mode = \"strict\"\n");
  Config f;
  load_config_file(file.path, f);
  apply_env_overrides({{"REPROX_ENGINE_DTYPE", "float16"}}, f);
  EXPECT_EQ(resolve_error(f),
            "env REPROX_ENGINE_DTYPE: engine.dtype \"float16\" needs engine.numeric_mode \"fast\", but "
            "engine.numeric_mode is \"strict\" (" + file.path + ":2); strict mode computes in float32 only");
}

TEST(ConfigEngineDtype, UnknownValueIsAnError) {
  TempToml file("[engine]\nnumeric_mode = \"fast\"\ndtype = \"bf16\"\n");
  Config c;
  load_config_file(file.path, c);
  EXPECT_EQ(resolve_error(c), file.path + ":3: engine.dtype: must be \"auto\", \"float32\", \"bfloat16\" or "
                                          "\"float16\", got \"bf16\"");
}

}  // namespace
}  // namespace reprox
