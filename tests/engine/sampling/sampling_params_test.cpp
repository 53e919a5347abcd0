#include "engine/sampling/sampling_params.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>

namespace reprox::engine {
namespace {

struct ValidationCase {
  const char* name;
  std::function<void(SamplingParams&)> change;
  const char* error_fragment;  // "" = valid
};

TEST(SamplingParams, Validation) {
  const ValidationCase cases[] = {
      {"defaults", [](SamplingParams&) {}, ""},
      {"greedy", [](SamplingParams& p) { p.temperature = 0; }, ""},
      {"negative temperature", [](SamplingParams& p) { p.temperature = -0.1; }, "temperature"},
      {"nan temperature", [](SamplingParams& p) { p.temperature = std::nan(""); }, "temperature"},
      {"top_p zero", [](SamplingParams& p) { p.top_p = 0; }, ""},
      {"top_p above one", [](SamplingParams& p) { p.top_p = 1.01; }, "top_p"},
      {"negative top_k", [](SamplingParams& p) { p.top_k = -1; }, "top_k"},
      {"presence too big", [](SamplingParams& p) { p.presence_penalty = 2.5; }, "presence_penalty"},
      {"frequency too small", [](SamplingParams& p) { p.frequency_penalty = -2.01; }, "frequency_penalty"},
      {"min_p one", [](SamplingParams& p) { p.min_p = 1; }, ""},
      {"min_p above one", [](SamplingParams& p) { p.min_p = 1.5; }, "min_p"},
      {"min_p negative", [](SamplingParams& p) { p.min_p = -0.1; }, "min_p"},
      {"repetition_penalty 10", [](SamplingParams& p) { p.repetition_penalty = 10; }, ""},
      {"repetition_penalty zero", [](SamplingParams& p) { p.repetition_penalty = 0; }, "repetition_penalty"},
      {"repetition_penalty past 10", [](SamplingParams& p) { p.repetition_penalty = 10.5; }, "repetition_penalty"},
      {"bias id negative", [](SamplingParams& p) { p.logit_bias = {{-1, 1.0}}; }, "logit_bias"},
      {"bias id past vocab", [](SamplingParams& p) { p.logit_bias = {{100, 1.0}}; }, "logit_bias"},
      {"bias last id", [](SamplingParams& p) { p.logit_bias = {{99, -100.0}}; }, ""},
      {"bias too big", [](SamplingParams& p) { p.logit_bias = {{5, 100.5}}; }, "logit_bias"},
      {"n zero", [](SamplingParams& p) { p.n = 0; }, "n must"},
      {"n 128", [](SamplingParams& p) { p.n = 128; }, ""},
      {"top_logprobs without logprobs", [](SamplingParams& p) { p.top_logprobs = 2; }, "requires logprobs"},
      {"top_logprobs 20", [](SamplingParams& p) { p.logprobs = true; p.top_logprobs = 20; }, ""},
      {"top_logprobs 21", [](SamplingParams& p) { p.logprobs = true; p.top_logprobs = 21; }, "top_logprobs"},
  };
  for (const auto& c : cases) {
    SamplingParams params;
    c.change(params);
    const std::string error = validate_sampling_params(params, 100);
    if (std::string(c.error_fragment).empty()) {
      EXPECT_EQ(error, "") << c.name;
    } else {
      EXPECT_NE(error.find(c.error_fragment), std::string::npos) << c.name << ": " << error;
    }
  }
  EXPECT_NE(validate_sampling_params(SamplingParams{}, 0), "");
}

}  // namespace
}  // namespace reprox::engine
