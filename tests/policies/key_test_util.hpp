// Helpers for the key tests: parse a body (it must be valid) and key it in a
// fixed context, taking the model from the body as the server would resolve it.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "policies/canonical_key.hpp"
#include "proxy/api/chat_request_parser.hpp"

namespace reprox::policy::testing {

inline KeyContext base_context() {
  KeyContext ctx;
  ctx.model_id = "tiny";
  ctx.fingerprint = "fp_0123456789abcdef";
  ctx.tenant = "tenant-a";
  ctx.ns = "";
  ctx.default_seed = 42;
  ctx.effective_max_tokens = 256;  // the backend default
  return ctx;
}

inline KeyResult key_in(const std::string& body, KeyContext ctx) {
  api::ParseResult r = api::parse_chat_request(body);
  EXPECT_TRUE(r.ok()) << body << " -> " << r.error.to_json();
  if (!r.ok()) return {};
  if (!r.request->model.empty()) ctx.model_id = r.request->model;
  ctx.effective_max_tokens = effective_max_tokens(*r.request, ctx.effective_max_tokens);
  return make_key(*r.request, ctx);
}

inline KeyResult key_of(const std::string& body) { return key_in(body, base_context()); }

}  // namespace reprox::policy::testing
