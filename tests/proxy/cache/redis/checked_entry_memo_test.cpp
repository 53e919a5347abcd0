// CheckedEntryMemo finds an entry only by all of its bytes, and stays bounded.
#include <gtest/gtest.h>

#include "proxy/cache/redis/checked_entry_memo.hpp"

namespace reprox {
namespace {

CheckedEntryMemo::Checked checked(std::string bytes, int64_t stored_ms = 1) {
  CheckedEntryMemo::Checked c;
  c.bytes = std::make_shared<const std::string>(std::move(bytes));
  c.stored_unix_ms = stored_ms;
  return c;
}

TEST(CheckedEntryMemo, FindsOnlyTheExactBytes) {
  CheckedEntryMemo memo;
  std::string entry(300, 'x');
  entry[150] = 'm';
  memo.remember(checked(entry, 42));
  const auto* found = memo.find(entry);
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->stored_unix_ms, 42);

  std::string middle = entry;
  middle[150] = 'n';  // same size, same first and last bytes
  EXPECT_EQ(memo.find(middle), nullptr);
  std::string last = entry;
  last.back() = 'y';
  EXPECT_EQ(memo.find(last), nullptr);
  EXPECT_EQ(memo.find(entry + "x"), nullptr);
  EXPECT_EQ(memo.find(entry.substr(1)), nullptr);
  EXPECT_EQ(memo.find(""), nullptr);
}

TEST(CheckedEntryMemo, KeepsTheLastFewAndNothingTooLarge) {
  CheckedEntryMemo memo;
  for (size_t i = 0; i <= CheckedEntryMemo::kSlots; ++i) memo.remember(checked("entry " + std::to_string(i)));
  EXPECT_EQ(memo.find("entry 0"), nullptr);  // the oldest went
  for (size_t i = 1; i <= CheckedEntryMemo::kSlots; ++i) EXPECT_NE(memo.find("entry " + std::to_string(i)), nullptr) << i;

  std::string huge(CheckedEntryMemo::kMaxEntryBytes + 1, 'h');
  memo.remember(checked(huge));
  EXPECT_EQ(memo.find(huge), nullptr);
  EXPECT_NE(memo.find("entry 1"), nullptr);  // a refused entry evicts nothing
}

}  // namespace
}  // namespace reprox
