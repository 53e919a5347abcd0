// RedisValueReader builds the same values as hiredis's own reader (whose
// redisReply objects copy_redis_reply turns into RedisValues), for every
// reply type, nested arrays, and input fed in pieces of any size.
#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <string>
#include <vector>

#include "proxy/cache/redis/redis_value_reader.hpp"

namespace reprox {
namespace {

std::string describe(const RedisValue& v) {
  switch (v.type) {
    case RedisValue::Type::nil: return "nil";
    case RedisValue::Type::integer: return "int:" + std::to_string(v.integer);
    case RedisValue::Type::string: return "str:" + v.str;
    case RedisValue::Type::status: return "status:" + v.str;
    case RedisValue::Type::error: return "error:" + v.str;
    case RedisValue::Type::array: {
      std::string out = "[";
      for (const auto& e : v.elements) out += describe(e) + ",";
      return out + "]";
    }
  }
  return "?";
}

// Every reply in `resp`, as hiredis's default reader and copy_redis_reply see them.
std::vector<std::string> oracle(const std::string& resp) {
  redisReader* reader = redisReaderCreate();
  EXPECT_EQ(redisReaderFeed(reader, resp.data(), resp.size()), REDIS_OK);
  std::vector<std::string> out;
  for (;;) {
    void* raw = nullptr;
    EXPECT_EQ(redisReaderGetReply(reader, &raw), REDIS_OK);
    if (!raw) break;
    out.push_back(describe(copy_redis_reply(static_cast<redisReply*>(raw))));
    freeReplyObject(raw);
  }
  redisReaderFree(reader);
  return out;
}

// Every reply in `resp`, fed to RedisValueReader `piece` bytes at a time.
std::vector<std::string> read_all(const std::string& resp, size_t piece) {
  RedisValueReader reader;
  std::vector<std::string> out;
  for (size_t at = 0; at < resp.size(); at += piece) {
    EXPECT_TRUE(reader.feed(resp.data() + at, std::min(piece, resp.size() - at)));
    for (;;) {
      RedisValue v;
      auto next = reader.next(v);
      EXPECT_NE(next, RedisValueReader::Next::error) << reader.error();
      if (next != RedisValueReader::Next::value) break;
      out.push_back(describe(v));
    }
  }
  return out;
}

TEST(RedisValueReader, ReadsEveryReplyTypeAsHiredisDoes) {
  std::string big(5000, 'e');
  big[17] = '\r';
  big[18] = '\n';
  const std::string resp =
      "+OK\r\n"
      "-ERR wrong type\r\n"
      ":-42\r\n"
      ":9223372036854775807\r\n"
      "$5\r\nhello\r\n"
      "$0\r\n\r\n"
      "$-1\r\n"
      "*-1\r\n"
      "*0\r\n"
      "*2\r\n$16\r\n1796372584934694\r\n$" + std::to_string(big.size()) + "\r\n" + big + "\r\n"
      "*2\r\n$1\r\na\r\n$-1\r\n"
      "*4\r\n:1\r\n*2\r\n$3\r\nkey\r\n*0\r\n*-1\r\n+inner\r\n"  // SCAN-like nesting
      "*3\r\n*1\r\n*1\r\n:7\r\n-ERR nested\r\n$-1\r\n";
  auto expected = oracle(resp);
  ASSERT_EQ(expected.size(), 13u);
  EXPECT_EQ(expected[9], "[str:1796372584934694,str:" + big + ",]");
  for (size_t piece : {resp.size(), size_t(1), size_t(2), size_t(3), size_t(7), size_t(64), size_t(4096)})
    EXPECT_EQ(read_all(resp, piece), expected) << "fed " << piece << " bytes at a time";
}

TEST(RedisValueReader, AProtocolErrorIsReportedNotCrashed) {
  RedisValueReader reader;
  // A partial array, then bytes that are no RESP type: the partial reply is
  // freed with the reader.
  ASSERT_TRUE(reader.feed("*3\r\n$1\r\na\r\n", 11));
  RedisValue v;
  EXPECT_EQ(reader.next(v), RedisValueReader::Next::incomplete);
  ASSERT_TRUE(reader.feed("?what\r\n", 7));
  EXPECT_EQ(reader.next(v), RedisValueReader::Next::error);
  EXPECT_NE(reader.error(), "");
  EXPECT_FALSE(reader.feed("+OK\r\n", 5));  // unusable after an error, as hiredis's reader
}

}  // namespace
}  // namespace reprox
