// Each bad body must give a 400 invalid_request_error naming the exact field.
#include <gtest/gtest.h>

#include <string>

#include "proxy/api/chat_request_parser.hpp"
#include "tests/support/test_names.hpp"

namespace reprox::api {
namespace {

struct BadBody {
  const char* body;
  const char* param;  // "" means a null param
};

#define MSGS R"("messages":[{"role":"user","content":"hi"}])"

const BadBody kBadBodies[] = {
    // whole body
    {"", ""},
    {"{", ""},
    {"not json", ""},
    {"{\"messages\":[{\"role\":\"user\",\"content\":\"\xff\"}]}", ""},  // invalid UTF-8
    {"[]", ""},
    {"42", ""},
    {"\"a string\"", ""},
    {"{" MSGS "} trailing", ""},
    // messages
    {"{}", "messages"},
    {R"({"messages":null})", "messages"},
    {R"({"messages":[]})", "messages"},
    {R"({"messages":{"role":"user"}})", "messages"},
    {R"({"messages":"hi"})", "messages"},
    {R"({"messages":["hi"]})", "messages[0]"},
    {R"({"messages":[{"role":"user","content":"a"},{"role":"user","content":"b"},{"role":"bot","content":"c"}]})",
     "messages[2].role"},
    {R"({"messages":[{"content":"hi"}]})", "messages[0].role"},
    {R"({"messages":[{"role":7,"content":"hi"}]})", "messages[0].role"},
    {R"({"messages":[{"role":"user"}]})", "messages[0].content"},
    {R"({"messages":[{"role":"user","content":null}]})", "messages[0].content"},
    {R"({"messages":[{"role":"user","content":5}]})", "messages[0].content"},
    {R"({"messages":[{"role":"user","content":{"text":"x"}}]})", "messages[0].content"},
    {R"({"messages":[{"role":"user","content":[]}]})", "messages[0].content"},
    {R"({"messages":[{"role":"user","content":["hi"]}]})", "messages[0].content[0]"},
    {R"({"messages":[{"role":"user","content":[{"text":"hi"}]}]})", "messages[0].content[0].type"},
    {R"({"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"video","video":{}}]}]})",
     "messages[0].content[1].type"},
    {R"({"messages":[{"role":"user","content":[{"type":"text"}]}]})", "messages[0].content[0].text"},
    {R"({"messages":[{"role":"user","content":[{"type":"text","text":1}]}]})", "messages[0].content[0].text"},
    {R"({"messages":[{"role":"user","content":[{"type":"image_url","image_url":"http://x"}]}]})",
     "messages[0].content[0].image_url"},
    {R"({"messages":[{"role":"user","content":[{"type":"image_url","image_url":{}}]}]})",
     "messages[0].content[0].image_url.url"},
    {R"({"messages":[{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"AA"}}]}]})",
     "messages[0].content[0].input_audio.format"},
    {R"({"messages":[{"role":"system","content":[{"type":"image_url","image_url":{"url":"u"}}]}]})",
     "messages[0].content[0].type"},
    {R"({"messages":[{"role":"assistant","content":[{"type":"refusal"}]}]})", "messages[0].content[0].refusal"},
    {R"({"messages":[{"role":"assistant","content":null}]})", "messages[0].content"},
    {R"({"messages":[{"role":"assistant"}]})", "messages[0].content"},
    {R"({"messages":[{"role":"user","content":"hi","name":3}]})", "messages[0].name"},
    {R"({"messages":[{"role":"tool","content":"42"}]})", "messages[0].tool_call_id"},
    {R"({"messages":[{"role":"tool","content":"42","tool_call_id":1}]})", "messages[0].tool_call_id"},
    {R"({"messages":[{"role":"function","content":"42"}]})", "messages[0].name"},
    {R"({"messages":[{"role":"assistant","content":null,"tool_calls":{}}]})", "messages[0].tool_calls"},
    {R"({"messages":[{"role":"assistant","content":null,"tool_calls":[]}]})", "messages[0].tool_calls"},
    {R"({"messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"arguments":"{}"}}]}]})",
     "messages[0].tool_calls[0].function.name"},
    {R"({"messages":[{"role":"user","content":"x","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]}]})",
     "messages[0].tool_calls"},
    // model
    {"{" MSGS R"(,"model":5})", "model"},
    {"{" MSGS R"(,"model":["m"]})", "model"},
    // sampling
    {"{" MSGS R"(,"temperature":"hot"})", "temperature"},
    {"{" MSGS R"(,"temperature":2.5})", "temperature"},
    {"{" MSGS R"(,"temperature":-0.1})", "temperature"},
    {"{" MSGS R"(,"top_p":1.01})", "top_p"},
    {"{" MSGS R"(,"top_p":-1})", "top_p"},
    {"{" MSGS R"(,"top_p":true})", "top_p"},
    {"{" MSGS R"(,"top_k":-1})", "top_k"},
    {"{" MSGS R"(,"top_k":2.5})", "top_k"},
    {"{" MSGS R"(,"n":0})", "n"},
    {"{" MSGS R"(,"n":129})", "n"},
    {"{" MSGS R"(,"n":"2"})", "n"},
    {"{" MSGS R"(,"max_tokens":0})", "max_tokens"},
    {"{" MSGS R"(,"max_tokens":1.5})", "max_tokens"},
    {"{" MSGS R"(,"max_tokens":"10"})", "max_tokens"},
    {"{" MSGS R"(,"max_completion_tokens":-3})", "max_completion_tokens"},
    {"{" MSGS R"(,"max_tokens":1e300})", "max_tokens"},
    {"{" MSGS R"(,"stop":5})", "stop"},
    {"{" MSGS R"(,"stop":["a","b","c","d","e"]})", "stop"},
    {"{" MSGS R"(,"stop":["a",1]})", "stop"},
    {"{" MSGS R"(,"seed":1.5})", "seed"},
    {"{" MSGS R"(,"seed":"7"})", "seed"},
    {"{" MSGS R"(,"seed":1e30})", "seed"},
    {"{" MSGS R"(,"seed":-1e30})", "seed"},
    {"{" MSGS R"(,"presence_penalty":2.01})", "presence_penalty"},
    {"{" MSGS R"(,"frequency_penalty":-3})", "frequency_penalty"},
    {"{" MSGS R"(,"frequency_penalty":"0"})", "frequency_penalty"},
    {"{" MSGS R"(,"logit_bias":[1]})", "logit_bias"},
    {"{" MSGS R"(,"logit_bias":{"abc":1}})", "logit_bias"},
    {"{" MSGS R"(,"logit_bias":{"-5":1}})", "logit_bias"},
    {"{" MSGS R"(,"logit_bias":{"5":101}})", "logit_bias"},
    {"{" MSGS R"(,"logit_bias":{"5":"1"}})", "logit_bias"},
    {"{" MSGS R"(,"logprobs":1})", "logprobs"},
    {"{" MSGS R"(,"logprobs":true,"top_logprobs":21})", "top_logprobs"},
    {"{" MSGS R"(,"logprobs":true,"top_logprobs":-1})", "top_logprobs"},
    {"{" MSGS R"(,"top_logprobs":3})", "top_logprobs"},
    {"{" MSGS R"(,"logprobs":false,"top_logprobs":0})", "top_logprobs"},
    {"{" MSGS R"(,"stream":"yes"})", "stream"},
    {"{" MSGS R"(,"stream":true,"stream_options":true})", "stream_options"},
    {"{" MSGS R"(,"stream_options":{"include_usage":true}})", "stream_options"},
    {"{" MSGS R"(,"stream":true,"stream_options":{"include_usage":"yes"}})", "stream_options.include_usage"},
    // tools and formats
    {"{" MSGS R"(,"tools":{}})", "tools"},
    {"{" MSGS R"(,"tools":[]})", "tools"},
    {"{" MSGS R"(,"tools":[5]})", "tools[0]"},
    {"{" MSGS R"(,"tools":[{"type":"retrieval"}]})", "tools[0].type"},
    {"{" MSGS R"(,"tools":[{"type":"function"}]})", "tools[0].function"},
    {"{" MSGS R"(,"tools":[{"type":"function","function":{}}]})", "tools[0].function.name"},
    {"{" MSGS R"(,"tools":[{"type":"function","function":{"name":"f","parameters":[]}}]})",
     "tools[0].function.parameters"},
    {"{" MSGS R"(,"tool_choice":"sometimes"})", "tool_choice"},
    {"{" MSGS R"(,"tool_choice":3})", "tool_choice"},
    {"{" MSGS R"(,"response_format":"json"})", "response_format"},
    {"{" MSGS R"(,"min_p":1.5})", "min_p"},
    {"{" MSGS R"(,"min_p":"0.1"})", "min_p"},
    {"{" MSGS R"(,"repetition_penalty":0})", "repetition_penalty"},
    {"{" MSGS R"(,"repetition_penalty":-1})", "repetition_penalty"},
    {"{" MSGS R"(,"repetition_penalty":11})", "repetition_penalty"},
    {"{" MSGS R"(,"min_tokens":-1})", "min_tokens"},
    {"{" MSGS R"(,"min_tokens":1.5})", "min_tokens"},
    {"{" MSGS R"(,"max_tokens":4,"min_tokens":5})", "min_tokens"},
    {"{" MSGS R"(,"max_completion_tokens":4,"min_tokens":5})", "min_tokens"},
    {"{" MSGS R"(,"ignore_eos":1})", "ignore_eos"},
    {"{" MSGS R"(,"include_stop_str_in_output":"yes"})", "include_stop_str_in_output"},
    {"{" MSGS R"(,"skip_special_tokens":0})", "skip_special_tokens"},
    {"{" MSGS R"(,"stop_token_ids":2})", "stop_token_ids"},
    {"{" MSGS R"(,"stop_token_ids":[-1]})", "stop_token_ids"},
    {"{" MSGS R"(,"stop_token_ids":[1.5]})", "stop_token_ids"},
    {"{" MSGS R"(,"stop_token_ids":["2"]})", "stop_token_ids"},
    {"{" MSGS R"(,"stop_token_ids":[2147483648]})", "stop_token_ids"},
    {"{" MSGS R"(,"allowed_token_ids":{}})", "allowed_token_ids"},
    {"{" MSGS R"(,"allowed_token_ids":[-3]})", "allowed_token_ids"},
    {"{" MSGS R"(,"bad_words":"no"})", "bad_words"},
    {"{" MSGS R"(,"bad_words":[3]})", "bad_words"},
    {"{" MSGS R"(,"bad_words":[" "]})", "bad_words"},
    {"{" MSGS R"(,"guided_choice":"yes"})", "guided_choice"},
    {"{" MSGS R"(,"guided_choice":[]})", "guided_choice"},
    {"{" MSGS R"(,"guided_choice":["yes",1]})", "guided_choice"},
    {"{" MSGS R"(,"guided_choice":["yes",""]})", "guided_choice"},
    {"{" MSGS R"(,"guided_choice":["yes"],"response_format":{"type":"json_object"}})", "guided_choice"},
    {"{" MSGS R"(,"truncate_prompt_tokens":0})", "truncate_prompt_tokens"},
    {"{" MSGS R"(,"truncate_prompt_tokens":-2})", "truncate_prompt_tokens"},
    {"{" MSGS R"(,"truncate_prompt_tokens":"8"})", "truncate_prompt_tokens"},
    {"{" MSGS R"(,"return_tokens_as_token_ids":"yes"})", "return_tokens_as_token_ids"},
    {"{" MSGS R"(,"continue_final_message":true})", "continue_final_message"},
    {"{" MSGS R"(,"add_generation_prompt":true,"continue_final_message":true})", "continue_final_message"},
    {"{" MSGS R"(,"add_generation_prompt":"no"})", "add_generation_prompt"},
    {"{" MSGS R"(,"add_generation_prompt":false,"continue_final_message":1})", "continue_final_message"},
    {"{" MSGS R"(,"chat_template_kwargs":[]})", "chat_template_kwargs"},
    {"{" MSGS R"(,"chat_template_kwargs":"enable_thinking"})", "chat_template_kwargs"},
    {"{" MSGS R"(,"chat_template_kwargs":{"add_generation_prompt":false}})", "chat_template_kwargs.add_generation_prompt"},
    {"{" MSGS R"(,"chat_template_kwargs":{"tools":[]}})", "chat_template_kwargs.tools"},
    {"{" MSGS R"(,"response_format":{}})", "response_format.type"},
    {"{" MSGS R"(,"response_format":{"type":"xml"}})", "response_format.type"},
    {"{" MSGS R"(,"response_format":{"type":"json_schema"}})", "response_format.json_schema"},
    {"{" MSGS R"(,"functions":{}})", "functions"},
    {"{" MSGS R"(,"functions":[{"description":"no name"}]})", "functions[0].name"},
    {"{" MSGS R"(,"function_call":"maybe"})", "function_call"},
    // other
    {"{" MSGS R"(,"user":42})", "user"},
    {"{" MSGS R"(,"metadata":"m"})", "metadata"},
    {"{" MSGS R"(,"store":"no"})", "store"},
    {"{" MSGS R"(,"cache":true})", "cache"},
    {"{" MSGS R"(,"cache":{"no-cache":"yes"}})", "cache.no-cache"},
    {"{" MSGS R"(,"cache":{"no_store":1}})", "cache.no_store"},
    {"{" MSGS R"(,"cache":{"ttl":-1}})", "cache.ttl"},
    {"{" MSGS R"(,"cache":{"ttl":1.5}})", "cache.ttl"},
    {"{" MSGS R"(,"cache":{"namespace":7}})", "cache.namespace"},
};

class ValidationErrors : public ::testing::TestWithParam<BadBody> {};

TEST_P(ValidationErrors, RejectsWithExactParam) {
  const BadBody& c = GetParam();
  ParseResult r = parse_chat_request(c.body);
  ASSERT_FALSE(r.ok()) << c.body;
  EXPECT_EQ(r.error.status, 400) << c.body;
  EXPECT_EQ(r.error.type, "invalid_request_error") << c.body;
  EXPECT_EQ(r.error.param, c.param) << c.body << " -> " << r.error.message;
  EXPECT_FALSE(r.error.message.empty());
  // The rendered error names the param (or null).
  std::string rendered = r.error.to_json();
  if (std::string(c.param).empty())
    EXPECT_NE(rendered.find("\"param\":null"), std::string::npos) << rendered;
  else
    EXPECT_NE(rendered.find("\"param\":\"" + std::string(c.param) + "\""), std::string::npos) << rendered;
}

INSTANTIATE_TEST_SUITE_P(Table, ValidationErrors, ::testing::ValuesIn(kBadBodies),
                         [](const ::testing::TestParamInfo<BadBody>& info) {
                           return testing_support::case_name(info.index, info.param.param);
                         });

TEST(ValidationErrorsTable, HasAtLeastFortyCases) { EXPECT_GE(std::size(kBadBodies), 40u); }

TEST(ValidationErrors, WrongTypeMessageSaysWhatWasExpected) {
  ParseResult r = parse_chat_request("{" MSGS R"(,"temperature":"hot"})");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error.message.find("expected a number"), std::string::npos) << r.error.message;
  EXPECT_NE(r.error.message.find("a string"), std::string::npos) << r.error.message;
}

TEST(ValidationErrors, InvalidUtf8SaysSo) {
  ParseResult r = parse_chat_request("{\"messages\":[{\"role\":\"user\",\"content\":\"\xc3\x28\"}]}");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error.message.find("UTF-8"), std::string::npos) << r.error.message;
}

}  // namespace
}  // namespace reprox::api
