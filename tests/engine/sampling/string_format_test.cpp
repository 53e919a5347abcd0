#include "engine/sampling/string_format.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "engine/sampling/json_machine.hpp"
#include "engine/sampling/json_schema.hpp"

namespace reprox::engine {
namespace {

bool whole(StringFormat::Kind kind, const std::string& text) {
  StringFormat f(kind);
  for (const char c : text)
    if (!f.feed(static_cast<uint8_t>(c))) return false;
  return f.complete();
}

void expect_format(StringFormat::Kind kind, const std::vector<std::string>& valid,
                   const std::vector<std::string>& invalid) {
  for (const auto& t : valid) EXPECT_TRUE(whole(kind, t)) << t;
  for (const auto& t : invalid) EXPECT_FALSE(whole(kind, t)) << t;
}

TEST(StringFormat, DatesAreDaysOfTheCalendar) {
  expect_format(StringFormat::kDate,
                {"2024-02-29", "2000-02-29", "2023-12-31", "0001-01-01", "9999-12-31", "2023-04-30", "2023-01-31"},
                {"2023-02-29", "1900-02-29", "2023-04-31", "2023-13-01", "2023-00-10", "2023-01-00", "0000-01-01",
                 "2023-1-01", "2023/01/01", "20230101", "2023-01-011", "2023-01-0", ""});
}

TEST(StringFormat, TimesCarrySecondsAndAnOffset) {
  expect_format(StringFormat::kTime, {"00:00:00Z", "23:59:59+05:30", "12:30:45.123456789-08:00", "08:15:00.5Z"},
                {"24:00:00Z", "12:60:00Z", "12:00:60Z", "12:00:00", "12:00Z", "12:00:00.Z", "12:00:00.1234567890Z",
                 "12:00:00+24:00", "12:00:00+05", "12:00:00z", "1:00:00Z"});
  expect_format(StringFormat::kDateTime, {"2024-02-29T23:59:59Z", "1999-12-31T00:00:00.25+01:00"},
                {"2023-02-29T00:00:00Z", "2024-01-01 00:00:00Z", "2024-01-01T00:00:00", "2024-01-01"});
}

TEST(StringFormat, UuidsAndIpv4Addresses) {
  expect_format(StringFormat::kUuid, {"123e4567-e89b-12d3-a456-426614174000", "ABCDEF01-2345-6789-ABCD-EF0123456789"},
                {"123e4567e89b12d3a456426614174000", "123e4567-e89b-12d3-a456-42661417400",
                 "123e4567-e89b-12d3-a456-4266141740000", "g23e4567-e89b-12d3-a456-426614174000"});
  expect_format(StringFormat::kIpv4, {"0.0.0.0", "192.168.1.254", "255.255.255.255", "10.0.0.1"},
                {"256.0.0.1", "01.0.0.1", "1.2.3", "1.2.3.4.5", "1..2.3", "1.2.3.", "1.2.3.04", ".1.2.3"});
}

TEST(StringFormat, LengthRangesAreTheShortestAndLongestStrings) {
  const std::pair<StringFormat::Kind, std::pair<std::string, std::string>> cases[] = {
      {StringFormat::kDate, {"2024-01-01", "2024-01-01"}},
      {StringFormat::kTime, {"00:00:00Z", "00:00:00.123456789+05:30"}},
      {StringFormat::kDateTime, {"2024-01-01T00:00:00Z", "2024-01-01T00:00:00.123456789+05:30"}},
      {StringFormat::kUuid, {"123e4567-e89b-12d3-a456-426614174000", "123e4567-e89b-12d3-a456-426614174000"}},
      {StringFormat::kIpv4, {"0.0.0.0", "255.255.255.255"}}};
  for (const auto& [kind, strings] : cases) {
    uint32_t shortest = 0, longest = 0;
    StringFormat::length_range(kind, &shortest, &longest);
    EXPECT_TRUE(whole(kind, strings.first));
    EXPECT_TRUE(whole(kind, strings.second));
    EXPECT_EQ(shortest, strings.first.size()) << strings.first;
    EXPECT_EQ(longest, strings.second.size()) << strings.second;
  }
}

TEST(StringFormat, NamesOutsideTheSetAreAnnotations) {
  EXPECT_EQ(StringFormat::parse("date-time"), StringFormat::kDateTime);
  EXPECT_EQ(StringFormat::parse("email"), StringFormat::kNone);
  EXPECT_EQ(StringFormat::parse("uri"), StringFormat::kNone);
}

// Every state reachable from the start, by key, can still reach a whole
// string: the guide never leads a format into a dead end. Explores the
// printable bytes from each distinct state.
TEST(StringFormat, EveryPrefixCanBeCompleted) {
  for (const auto kind : {StringFormat::kDate, StringFormat::kTime, StringFormat::kDateTime, StringFormat::kUuid,
                          StringFormat::kIpv4}) {
    std::map<std::string, StringFormat> states;
    std::map<std::string, std::set<std::string>> successors;
    std::vector<std::string> frontier;
    auto key_of = [](const StringFormat& f) {
      std::string k;
      f.append_key(&k);
      return k;
    };
    const StringFormat start(kind);
    states.emplace(key_of(start), start);
    frontier.push_back(key_of(start));
    while (!frontier.empty()) {
      const std::string k = frontier.back();
      frontier.pop_back();
      for (int byte = 0x20; byte < 0x7F; ++byte) {
        StringFormat next = states.at(k);
        if (!next.feed(static_cast<uint8_t>(byte))) continue;
        const std::string nk = key_of(next);
        successors[k].insert(nk);
        if (states.emplace(nk, next).second) frontier.push_back(nk);
      }
    }
    std::set<std::string> can_finish;
    for (const auto& [k, f] : states)
      if (f.complete()) can_finish.insert(k);
    for (bool grew = true; grew;) {
      grew = false;
      for (const auto& [k, next] : successors)
        if (!can_finish.count(k))
          for (const auto& nk : next)
            if (can_finish.count(nk)) {
              can_finish.insert(k);
              grew = true;
              break;
            }
    }
    EXPECT_EQ(can_finish.size(), states.size()) << "format " << int(kind) << ": a state with no way to finish";
    EXPECT_GT(states.size(), 10u);
  }
}

TEST(StringFormat, ASchemaEnforcesItsFormats) {
  std::string error;
  const auto schema = JsonSchema::compile_text(
      R"({"type":"object","properties":{"day":{"type":"string","format":"date"},"id":{"type":"string","format":"uuid"},)"
      R"("mail":{"type":"string","format":"email"}},"required":["day","id","mail"],"additionalProperties":false})",
      &error);
  ASSERT_TRUE(schema) << error;
  auto follows = [&](const std::string& doc) {
    JsonMachine m(schema.get());
    return m.feed(doc) && m.complete();
  };
  EXPECT_TRUE(follows(R"({"day":"2024-02-29","id":"123e4567-e89b-12d3-a456-426614174000","mail":"not checked"})"));
  EXPECT_FALSE(follows(R"({"day":"2023-02-29","id":"123e4567-e89b-12d3-a456-426614174000","mail":""})"));
  EXPECT_FALSE(follows(R"({"day":"tomorrow","id":"123e4567-e89b-12d3-a456-426614174000","mail":""})"));
  EXPECT_FALSE(follows(R"({"day":"2024-02-2\u0039","id":"123e4567-e89b-12d3-a456-426614174000","mail":""})"));
  // Length bounds that would cut a format short are refused; loose ones are fine.
  EXPECT_FALSE(JsonSchema::compile_text(
      R"({"type":"object","properties":{"t":{"type":"string","format":"time","maxLength":10}}})", &error));
  EXPECT_NE(error.find("format 'time'"), std::string::npos) << error;
  EXPECT_TRUE(JsonSchema::compile_text(
      R"({"type":"object","properties":{"d":{"type":"string","format":"date","minLength":10,"maxLength":64}}})",
      &error))
      << error;
  // Keys of a free object are not held to a value's format.
  const auto free_values = JsonSchema::compile_text(
      R"({"type":"object","properties":{"when":{"type":"object"}},"required":["when"]})", &error);
  JsonMachine m(free_values.get());
  EXPECT_TRUE(m.feed(R"({"when":{"any key":"any value"}})") && m.complete());
}

}  // namespace
}  // namespace reprox::engine
