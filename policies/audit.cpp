#include "policies/audit.hpp"

#include <algorithm>
#include <cctype>
#include <iterator>
#include <vector>

namespace reprox::policy {
namespace {

struct Choice {
  std::string text, extra, logprobs, finish_reason;
};

std::vector<Choice> choices_of(const Generation& g) {
  std::vector<Choice> out(g.n_choices);
  for (const GenEvent& e : g.events) {
    if (e.choice >= out.size()) out.resize(e.choice + 1);
    Choice& c = out[e.choice];
    c.text += e.delta.content;
    c.extra += e.delta.extra;
    if (!e.delta.logprobs.empty()) {  // raw JSON array elements: join with commas
      if (!c.logprobs.empty()) c.logprobs += ',';
      c.logprobs += e.delta.logprobs;
    }
    if (!e.finish_reason.empty()) c.finish_reason = e.finish_reason;
  }
  return out;
}

bool differ(std::string* why, std::string text) {
  if (why) *why = std::move(text);
  return false;
}

std::vector<std::string> tokens_of(const Generation& g) {
  std::vector<std::string> out;
  for (const Choice& c : choices_of(g)) {
    size_t i = 0;
    while (i < c.text.size()) {
      while (i < c.text.size() && std::isspace(static_cast<unsigned char>(c.text[i]))) ++i;
      size_t start = i;
      while (i < c.text.size() && !std::isspace(static_cast<unsigned char>(c.text[i]))) ++i;
      if (i > start) out.push_back(c.text.substr(start, i - start));
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace

double answer_similarity(const Generation& a, const Generation& b) {
  const std::vector<std::string> ta = tokens_of(a), tb = tokens_of(b);
  if (ta.empty() && tb.empty()) return 1.0;
  std::vector<std::string> both;
  std::set_intersection(ta.begin(), ta.end(), tb.begin(), tb.end(), std::back_inserter(both));
  return double(both.size()) / double(ta.size() + tb.size() - both.size());
}

bool same_answer(const Generation& a, const Generation& b, std::string* why) {
  if (a.system_fingerprint != b.system_fingerprint)
    return differ(why, "system_fingerprint " + a.system_fingerprint + " vs " + b.system_fingerprint);
  if (a.usage.prompt_tokens != b.usage.prompt_tokens || a.usage.completion_tokens != b.usage.completion_tokens)
    return differ(why, "token counts " + std::to_string(a.usage.prompt_tokens) + "/" +
                           std::to_string(a.usage.completion_tokens) + " vs " + std::to_string(b.usage.prompt_tokens) +
                           "/" + std::to_string(b.usage.completion_tokens));
  const std::vector<Choice> ca = choices_of(a), cb = choices_of(b);
  if (ca.size() != cb.size())
    return differ(why, std::to_string(ca.size()) + " choices vs " + std::to_string(cb.size()));
  for (size_t i = 0; i < ca.size(); ++i) {
    const std::string c = "choice " + std::to_string(i) + ": ";
    if (ca[i].text != cb[i].text) return differ(why, c + "text");
    if (ca[i].extra != cb[i].extra) return differ(why, c + "tool calls or other delta members");
    if (ca[i].logprobs != cb[i].logprobs) return differ(why, c + "logprobs");
    if (ca[i].finish_reason != cb[i].finish_reason)
      return differ(why, c + "finish_reason " + ca[i].finish_reason + " vs " + cb[i].finish_reason);
  }
  return true;
}

}  // namespace reprox::policy
