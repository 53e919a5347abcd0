// nst/JSONTestSuite as request bodies: every file gives a ChatRequest or a
// 4xx ApiError (never a crash), and every n_* file is rejected.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "proxy/api/chat_request_parser.hpp"

namespace reprox::api {
namespace {

namespace fs = std::filesystem;

TEST(JsonTestSuite, EveryFileGivesARequestOrA4xx) {
  const fs::path dir = REPROX_JSON_TEST_SUITE_DIR;
  ASSERT_TRUE(fs::is_directory(dir)) << "corpus missing: " << dir;
  size_t files = 0, rejected_n = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (!entry.is_regular_file() || entry.path().extension() != ".json") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::string body((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ParseResult r = parse_chat_request(body);
    const std::string name = entry.path().filename().string();
    ++files;
    if (!r.ok()) {
      EXPECT_GE(r.error.status, 400) << name;
      EXPECT_LT(r.error.status, 500) << name;
      EXPECT_FALSE(r.error.message.empty()) << name;
    }
    if (name.rfind("n_", 0) == 0) {
      EXPECT_FALSE(r.ok()) << name << " was accepted";
      ++rejected_n;
    }
  }
  EXPECT_GT(files, 300u);
  EXPECT_GT(rejected_n, 150u);
}

TEST(JsonTestSuite, ChatBodyWithCorpusStringsStillParses) {
  // A valid corpus string (escaped surrogate pair) used as message content.
  ParseResult r = parse_chat_request(R"({"messages":[{"role":"user","content":"\uD834\uDD1E"}]})");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.request->messages[0].content.as_string(), "\xF0\x9D\x84\x9E");
}

}  // namespace
}  // namespace reprox::api
