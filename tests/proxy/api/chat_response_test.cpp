// Completion ids: "chatcmpl-" and 24 letters and digits (they are written
// into answers without JSON escaping), and distinct from one another. The
// hit path's two-part rendering gives the same bytes as the one-part one.
#include <gtest/gtest.h>

#include <cctype>
#include <set>
#include <string>

#include "proxy/api/chat_response.hpp"

namespace reprox::api {
namespace {

TEST(CompletionId, PrefixAndAlphanumericDigits) {
  for (int i = 0; i < 1000; ++i) {
    const std::string id = new_completion_id();
    ASSERT_EQ(id.size(), 9u + 24u);
    ASSERT_EQ(id.rfind("chatcmpl-", 0), 0u) << id;
    for (size_t k = 9; k < id.size(); ++k) ASSERT_TRUE(std::isalnum(static_cast<unsigned char>(id[k]))) << id;
  }
}

TEST(CompletionId, Distinct) {
  std::set<std::string> seen;
  for (int i = 0; i < 100000; ++i) seen.insert(new_completion_id());
  EXPECT_EQ(seen.size(), 100000u);
}

TEST(CompletionId, EveryDigitIsUsed) {
  std::set<char> digits;
  for (int i = 0; i < 2000; ++i)
    for (char ch : new_completion_id().substr(9)) digits.insert(ch);
  EXPECT_EQ(digits.size(), 62u);
}

TEST(CompletionBody, SuffixRenderingEqualsTheWholeRendering) {
  Generation gen;
  gen.n_choices = 1;
  GenEvent e;
  e.delta.content = "Hi \"there\"\n\u00e9";
  e.finish_reason = "stop";
  gen.events.push_back(e);
  gen.usage = Usage{7, 3, 2};
  const std::string tail = render_completion_tail(gen);
  for (const char* model : {"m", "model \"quoted\" \x01"}) {
    ResponseMeta meta{new_completion_id(), 1764000000, model, "fp_0123456789abcdef"};
    EXPECT_EQ(render_completion_from_suffix(meta.id, meta.created,
                                            render_completion_suffix(meta.model, meta.system_fingerprint, tail)),
              render_completion_from_tail(meta, tail));
  }
}

}  // namespace
}  // namespace reprox::api
