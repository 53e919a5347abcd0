// engine.kv_slots: the key reaches Config from the file and the environment
// with its provenance; check_engine_kv_slots() accepts auto, on and off, and
// refuses any other value, or "on" in strict mode, with an error that names
// the keys and where their values came from.
#include <gtest/gtest.h>

#include <string>

#include "conf/config.hpp"
#include "tests/conf/temp_toml.hpp"

namespace reprox {
namespace {

std::string check_error(const Config& c) {
  try {
    check_engine_kv_slots(c);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(ConfigEngineKvSlots, DefaultIsAuto) {
  Config c;
  EXPECT_EQ(c.kv_slots, "auto");
  EXPECT_EQ(check_error(c), "");
  EXPECT_NE(describe_config(c).find("engine.kv_slots = \"auto\""), std::string::npos);
}

TEST(ConfigEngineKvSlots, KeyReachesConfigFromTheFileAndTheEnvironment) {
  TempToml file("[engine]\nnumeric_mode = \"fast\"\nkv_slots = \"on\"\n");
  Config c;
  load_config_file(file.path, c);
  EXPECT_EQ(c.kv_slots, "on");
  EXPECT_EQ(c.sources["engine.kv_slots"], file.path + ":3");
  EXPECT_EQ(check_error(c), "");
  apply_env_overrides({{"REPROX_ENGINE_KV_SLOTS", "off"}}, c);
  EXPECT_EQ(c.kv_slots, "off");
  EXPECT_EQ(c.sources["engine.kv_slots"], "env REPROX_ENGINE_KV_SLOTS");
}

TEST(ConfigEngineKvSlots, AnUnknownValueNamesWhereItCameFrom) {
  Config c;
  set_config_key(c, "engine.kv_slots", "yes", "env REPROX_ENGINE_KV_SLOTS");
  EXPECT_EQ(check_error(c), "env REPROX_ENGINE_KV_SLOTS: engine.kv_slots: must be \"auto\", \"on\" or \"off\", got \"yes\"");
}

TEST(ConfigEngineKvSlots, OnInStrictModeNamesBothKeysAndSources) {
  Config c;
  set_config_key(c, "engine.kv_slots", "on", "flag");
  EXPECT_EQ(check_error(c),
            "flag: engine.kv_slots \"on\" needs engine.numeric_mode \"fast\", but engine.numeric_mode is \"strict\" "
            "(default)");
  set_config_key(c, "engine.numeric_mode", "fast", "file");
  EXPECT_EQ(check_error(c), "");
  set_config_key(c, "engine.kv_slots", "off", "flag");
  set_config_key(c, "engine.numeric_mode", "strict", "file");
  EXPECT_EQ(check_error(c), "");  // off and auto suit either mode
}

}  // namespace
}  // namespace reprox
