#include "engine/sampling/choice_machine.hpp"

#include <gtest/gtest.h>

namespace reprox::engine {
namespace {

TEST(ChoiceMachine, FollowsTheChoicesThatShareThePrefix) {
  const ChoiceMachine start({"yes", "no", "yesterday", "no"});
  ChoiceMachine m = start;
  EXPECT_FALSE(m.complete());
  EXPECT_TRUE(m.feed("yes"));
  EXPECT_TRUE(m.complete());
  EXPECT_FALSE(m.finished()) << "yesterday still extends it";
  ChoiceMachine longer = m;
  EXPECT_TRUE(longer.feed("terday"));
  EXPECT_TRUE(longer.finished());
  EXPECT_FALSE(longer.feed('s'));

  ChoiceMachine n = start;
  EXPECT_TRUE(n.feed('n'));
  EXPECT_FALSE(n.complete());
  EXPECT_TRUE(n.feed('o'));
  EXPECT_TRUE(n.finished());

  ChoiceMachine bad = start;
  EXPECT_FALSE(bad.feed('x'));
  ChoiceMachine case_matters = start;
  EXPECT_FALSE(case_matters.feed('Y'));
}

TEST(ChoiceMachine, KeysNameTheState) {
  ChoiceMachine a({"alpha", "beta"}), b({"alpha", "beta"});
  ASSERT_TRUE(a.feed("al"));
  ASSERT_TRUE(b.feed("a"));
  std::string ka, kb;
  a.append_key(&ka);
  b.append_key(&kb);
  EXPECT_NE(ka, kb);
  ASSERT_TRUE(b.feed('l'));
  kb.clear();
  b.append_key(&kb);
  EXPECT_EQ(ka, kb);
}

TEST(ChoiceMachine, HandlesBytesAboveAscii) {
  ChoiceMachine m({"caf\xC3\xA9", "cafe"});
  EXPECT_TRUE(m.feed("caf"));
  ChoiceMachine accented = m;
  EXPECT_TRUE(accented.feed("\xC3\xA9"));
  EXPECT_TRUE(accented.finished());
  EXPECT_TRUE(m.feed('e'));
  EXPECT_TRUE(m.finished());
}

}  // namespace
}  // namespace reprox::engine
