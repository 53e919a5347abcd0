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

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Each corpus document as the value of an unknown field of a valid request:
// y_* documents must be accepted (and kept in raw), n_* rejected.
TEST(JsonTestSuite, CorpusValuesInsideAValidRequest) {
  const fs::path dir = REPROX_JSON_TEST_SUITE_DIR;
  ASSERT_TRUE(fs::is_directory(dir)) << "corpus missing: " << dir;
  size_t accepted_y = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() != ".json") continue;
    std::string body = R"({"messages":[{"role":"user","content":"x"}],"x_extra":)" + read_file(entry.path()) + "\n}";
    ParseResult r = parse_chat_request(body);
    if (!r.ok()) {
      EXPECT_EQ(r.error.status, 400) << name;
      EXPECT_TRUE(r.error.param.empty()) << name << ": a JSON error names no field";
    }
    if (name.rfind("y_", 0) == 0) {
      EXPECT_TRUE(r.ok()) << name << " -> " << r.error.message;
      if (r.ok()) {
        EXPECT_NE(r.request->raw.find("x_extra"), nullptr) << name;
      }
      ++accepted_y;
    }
    if (name.rfind("n_", 0) == 0) {
      EXPECT_FALSE(r.ok()) << name << " was accepted inside a request";
    }
  }
  EXPECT_GT(accepted_y, 90u);
}

// Seeded byte mutations of a full request: never a crash, always ok or a 400.
TEST(JsonTestSuite, MutatedRequestsNeverCrash) {
  const std::string seed_body = R"({"model":"m","messages":[{"role":"system","content":"s"},
    {"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"u"}}]},
    {"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},
    {"role":"tool","content":"1","tool_call_id":"c"}],"temperature":0.5,"top_p":0.9,"seed":-3,"n":2,
    "max_tokens":9,"stop":["x"],"logit_bias":{"5":1},"logprobs":true,"top_logprobs":2,"stream":true,
    "stream_options":{"include_usage":true},"tools":[{"type":"function","function":{"name":"f"}}],
    "response_format":{"type":"json_object"},"cache":{"ttl":5}})";
  ASSERT_TRUE(parse_chat_request(seed_body).ok());
  uint64_t state = 0x9E3779B97F4A7C15ull;
  auto next = [&] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  const char alphabet[] = "{}[]\",:0123456789.-e truefalsnul\\\xff\xc3";
  size_t ok = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string body = seed_body;
    int edits = 1 + static_cast<int>(next() % 3);
    for (int e = 0; e < edits; ++e) {
      size_t pos = next() % body.size();
      char c = alphabet[next() % (sizeof alphabet - 1)];
      switch (next() % 3) {
        case 0: body[pos] = c; break;
        case 1: body.insert(body.begin() + static_cast<long>(pos), c); break;
        default: body.erase(pos, 1 + next() % 4); break;
      }
      if (body.empty()) body = "{";
    }
    ParseResult r = parse_chat_request(body);
    if (r.ok()) {
      ++ok;
    } else {
      ASSERT_EQ(r.error.status, 400) << body;
      ASSERT_FALSE(r.error.message.empty()) << body;
    }
  }
  EXPECT_GT(ok, 0u);
}

TEST(JsonTestSuite, ChatBodyWithCorpusStringsStillParses) {
  // A valid corpus string (escaped surrogate pair) used as message content.
  ParseResult r = parse_chat_request(R"({"messages":[{"role":"user","content":"\uD834\uDD1E"}]})");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.request->messages[0].content.as_string(), "\xF0\x9D\x84\x9E");
}

}  // namespace
}  // namespace reprox::api
