#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/json.hpp"
#include "proxy/app/audit_record.hpp"

namespace reprox {
namespace {

AuditRecord full_record() {
  AuditRecord r;
  r.time_ms = 1796416985123;
  r.key = "ab12cd34ef5678900123456789abcdef";
  r.tenant = "0f1e2d3c4b5a69788796a5b4c3d2e1f0";
  r.model = "reprox-tiny-qwen3";
  r.seed = 18446744073709551615ull;
  r.seed_injected = true;
  r.params.temperature = 0.7;
  r.params.top_p = 0.9;
  r.params.top_k = 40;
  r.params.max_tokens = 256;
  r.params.n = 2;
  r.params.stop = {"END", "\n\n"};
  r.params.presence_penalty = 0.5;
  r.params.frequency_penalty = -0.25;
  r.params.logprobs = true;
  r.params.top_logprobs = 3;
  r.params.response_format = "json_schema";
  r.params.stream = true;
  r.mode = "greedy-fallback";
  r.fingerprint = "fp_reprox_1";
  r.cache = "hit";
  r.tier = "memory";
  r.rule = "conf/reprox.toml:40";
  r.ttl_s = 3600;
  r.prompt_tokens = 12;
  r.completion_tokens = 34;
  r.cached_tokens = 8;
  r.latency_ms = 0.4212345;
  r.status = 200;
  return r;
}

json::Value parse_line(const std::string& line) {
  EXPECT_FALSE(line.empty());
  EXPECT_EQ(line.back(), '\n');
  EXPECT_EQ(line.find('\n'), line.size() - 1) << "one line only";
  json::Value v;
  auto err = json::parse(line, v);
  EXPECT_FALSE(err) << err.message << "\n" << line;
  return v;
}

std::vector<std::string> keys_of(const json::Value& v) {
  std::vector<std::string> keys;
  for (const auto& kv : v.as_object()) keys.push_back(kv.first);
  return keys;
}

TEST(AuditRecord, JsonLineHasEveryField) {
  json::Value v = parse_line(audit_json_line(full_record()));
  ASSERT_TRUE(v.is_object());
  EXPECT_EQ(keys_of(v), (std::vector<std::string>{
                            "time", "time_ms", "key", "tenant", "model", "seed", "seed_injected",
                            "params", "mode", "fingerprint", "cache", "tier", "rule", "ttl_s",
                            "prompt_tokens", "completion_tokens", "cached_tokens", "latency_ms",
                            "status", "error"}));
  EXPECT_EQ(v.find("time")->as_string(), "2026-12-04T20:43:05.123Z");
  EXPECT_EQ(v.find("time_ms")->as_int(), 1796416985123);
  EXPECT_EQ(v.find("key")->as_string(), "ab12cd34ef5678900123456789abcdef");
  EXPECT_EQ(v.find("tenant")->as_string(), "0f1e2d3c4b5a69788796a5b4c3d2e1f0");
  EXPECT_EQ(v.find("model")->as_string(), "reprox-tiny-qwen3");
  EXPECT_EQ(v.find("seed")->as_uint(), 18446744073709551615ull);
  EXPECT_TRUE(v.find("seed_injected")->as_bool());
  EXPECT_EQ(v.find("mode")->as_string(), "greedy-fallback");
  EXPECT_EQ(v.find("fingerprint")->as_string(), "fp_reprox_1");
  EXPECT_EQ(v.find("cache")->as_string(), "hit");
  EXPECT_EQ(v.find("tier")->as_string(), "memory");
  EXPECT_EQ(v.find("rule")->as_string(), "conf/reprox.toml:40");
  EXPECT_EQ(v.find("ttl_s")->as_int(), 3600);
  EXPECT_EQ(v.find("prompt_tokens")->as_int(), 12);
  EXPECT_EQ(v.find("completion_tokens")->as_int(), 34);
  EXPECT_EQ(v.find("cached_tokens")->as_int(), 8);
  EXPECT_DOUBLE_EQ(v.find("latency_ms")->as_double(), 0.421);
  EXPECT_EQ(v.find("status")->as_int(), 200);
  EXPECT_EQ(v.find("error")->as_string(), "");
}

TEST(AuditRecord, JsonLineParams) {
  json::Value v = parse_line(audit_json_line(full_record()));
  const json::Value* p = v.find("params");
  ASSERT_TRUE(p && p->is_object());
  EXPECT_EQ(keys_of(*p), (std::vector<std::string>{
                             "temperature", "top_p", "top_k", "max_tokens", "n", "stop",
                             "presence_penalty", "frequency_penalty", "logprobs", "top_logprobs",
                             "response_format", "stream"}));
  EXPECT_DOUBLE_EQ(p->find("temperature")->as_double(), 0.7);
  EXPECT_DOUBLE_EQ(p->find("top_p")->as_double(), 0.9);
  EXPECT_EQ(p->find("top_k")->as_int(), 40);
  EXPECT_EQ(p->find("max_tokens")->as_int(), 256);
  EXPECT_EQ(p->find("n")->as_int(), 2);
  ASSERT_EQ(p->find("stop")->as_array().size(), 2u);
  EXPECT_EQ(p->find("stop")->as_array()[1].as_string(), "\n\n");
  EXPECT_DOUBLE_EQ(p->find("presence_penalty")->as_double(), 0.5);
  EXPECT_DOUBLE_EQ(p->find("frequency_penalty")->as_double(), -0.25);
  EXPECT_TRUE(p->find("logprobs")->as_bool());
  EXPECT_EQ(p->find("top_logprobs")->as_int(), 3);
  EXPECT_EQ(p->find("response_format")->as_string(), "json_schema");
  EXPECT_TRUE(p->find("stream")->as_bool());

  AuditRecord plain;
  json::Value q = parse_line(audit_json_line(plain));
  EXPECT_EQ(q.find("params")->find("response_format"), nullptr);
  EXPECT_TRUE(q.find("params")->find("stop")->as_array().empty());
}

TEST(AuditRecord, MessagesOnlyWhenSet) {
  AuditRecord r = full_record();
  EXPECT_EQ(parse_line(audit_json_line(r)).find("messages"), nullptr);

  json::Value messages;
  ASSERT_FALSE(json::parse(R"([{"role":"user","content":"Hi \"there\"\n"}])", messages));
  r.messages = messages;
  json::Value v = parse_line(audit_json_line(r));
  const json::Value* m = v.find("messages");
  ASSERT_TRUE(m && m->is_array());
  EXPECT_EQ(json::dump(*m), json::dump(messages));
  EXPECT_EQ(keys_of(v).back(), "messages");
}

TEST(AuditRecord, EscapesStrings) {
  AuditRecord r = full_record();
  r.model = "m\"o\\d\ne\tl\x01 \xC3\xA9 \xF0\x9F\x98\x80";
  r.params.stop = {"\"quoted\"", "line\r\nbreak", "\xE2\x80\xA8", "</script>"};
  r.error = "bad \xFF byte";
  json::Value v = parse_line(audit_json_line(r));
  EXPECT_EQ(v.find("model")->as_string(), r.model);
  const auto& stop = v.find("params")->find("stop")->as_array();
  ASSERT_EQ(stop.size(), r.params.stop.size());
  for (size_t i = 0; i < stop.size(); ++i) EXPECT_EQ(stop[i].as_string(), r.params.stop[i]);
  EXPECT_EQ(v.find("error")->as_string(), "bad \xEF\xBF\xBD byte");  // U+FFFD
}

TEST(AuditRecord, AuditParamsFromRequest) {
  api::ChatRequest req;
  req.temperature = 0.2;
  req.top_p = 0.5;
  req.top_k = 7;
  req.n = 3;
  req.max_tokens = 10;
  req.stop = {"x"};
  req.presence_penalty = 1.0;
  req.frequency_penalty = 2.0;
  req.logprobs = true;
  req.top_logprobs = 4;
  req.response_format = json::Object{{"type", json::Value("json_object")}};
  req.stream = true;
  AuditParams p = audit_params(req, 99);
  EXPECT_EQ(p.temperature, 0.2);
  EXPECT_EQ(p.top_p, 0.5);
  EXPECT_EQ(p.top_k, 7);
  EXPECT_EQ(p.n, 3);
  EXPECT_EQ(p.max_tokens, 99);
  EXPECT_EQ(p.stop, std::vector<std::string>{"x"});
  EXPECT_EQ(p.presence_penalty, 1.0);
  EXPECT_EQ(p.frequency_penalty, 2.0);
  EXPECT_TRUE(p.logprobs);
  EXPECT_EQ(p.top_logprobs, 4);
  EXPECT_EQ(p.response_format, "json_object");
  EXPECT_TRUE(p.stream);
  EXPECT_EQ(audit_params(api::ChatRequest{}, 16).response_format, "");
}

TEST(AuditRecord, TimeFormatting) {
  struct Case {
    int64_t ms;
    const char* text;
  };
  const Case cases[] = {
      {0, "1970-01-01T00:00:00.000Z"},
      {1, "1970-01-01T00:00:00.001Z"},
      {-1, "1969-12-31T23:59:59.999Z"},
      {1796416985123, "2026-12-04T20:43:05.123Z"},
      {951825600001, "2000-02-29T12:00:00.001Z"},
      {946684799999, "1999-12-31T23:59:59.999Z"},
      {1709164800000, "2024-02-29T00:00:00.000Z"},
      {4102444799999, "2099-12-31T23:59:59.999Z"},
      {4107542400000, "2100-03-01T00:00:00.000Z"},
      {-62167219200000, "0000-01-01T00:00:00.000Z"},
      {INT64_MIN, "0000-01-01T00:00:00.000Z"},
      {INT64_MAX, "9999-12-31T23:59:59.999Z"},
  };
  for (const auto& c : cases) EXPECT_EQ(rfc3339_utc_ms(c.ms), c.text) << c.ms;
}

TEST(AuditRecord, AccessLine) {
  AuditRecord r = full_record();
  r.tenant = "";
  EXPECT_EQ(access_line(r, "127.0.0.1", "POST", "/v1/chat/completions"),
            "2026-12-04T20:43:05.123Z 127.0.0.1 \"POST /v1/chat/completions\" 200 hit memory "
            "0.42ms key=ab12cd34ef567890 model=reprox-tiny-qwen3\n");

  r = full_record();
  r.cache = "error";
  r.tier = "";
  r.status = 502;
  r.error = "upstream_error";
  r.model = "evil\nmodel \"x\"";
  EXPECT_EQ(access_line(r, "", "POST", "/v1/chat/completions?a=\"b\""),
            "2026-12-04T20:43:05.123Z - \"POST /v1/chat/completions?a=\\x22b\\x22\" 502 error - "
            "0.42ms key=ab12cd34ef567890 model=evil\\x0amodel\\x20\\x22x\\x22 tenant=0f1e2d3c "
            "error=upstream_error\n");
}

}  // namespace
}  // namespace reprox
