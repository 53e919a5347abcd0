#include "proxy/key_cli.hpp"

#include <istream>
#include <iterator>
#include <ostream>
#include <string>

#include "policies/explain.hpp"
#include "proxy/api/chat_request_parser.hpp"

namespace reprox {

int run_key_cli(std::istream& in, std::ostream& out, const policy::KeyContext& defaults) {
  std::string body((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  api::ParseResult parsed = api::parse_chat_request(body);
  if (!parsed) {
    out << parsed.error.to_json() << '\n';
    return 2;
  }
  const api::ChatRequest& req = *parsed.request;
  policy::KeyContext ctx = defaults;
  if (!req.model.empty()) ctx.model_id = req.model;
  if (req.cache.ns) ctx.ns = *req.cache.ns;
  ctx.effective_max_tokens = policy::effective_max_tokens(req, defaults.effective_max_tokens);
  const policy::KeyResult key = policy::make_key(req, ctx);
  const policy::Cacheability cacheability = policy::cacheability(req.cache);
  out << policy::explain_json(policy::Explanation{key, cacheability, nullptr, nullptr, "", {}}) << '\n';
  return 0;
}

}  // namespace reprox
