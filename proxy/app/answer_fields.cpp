#include "proxy/app/answer_fields.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <utility>

namespace reprox {

namespace {

// Head fields gathered as views, then written into one string sized once
// (appending field by field cost more than the rest of the head).
class FieldList {
 public:
  void add(std::string_view name, std::string_view value) {
    if (n_ < items_.size()) items_[n_++] = {name, value};
  }
  // Formats `v` into one of a few owned buffers and adds it.
  void add_number(std::string_view name, uint64_t v) {
    if (numbers_used_ == kNumbers) return;
    char* buf = numbers_[numbers_used_++];
    add(name, std::string_view(buf, size_t(std::to_chars(buf, buf + 24, v).ptr - buf)));
  }
  std::string render() const {
    size_t size = 0;
    for (size_t i = 0; i < n_; ++i) size += items_[i].first.size() + 2 + items_[i].second.size() + 2;
    std::string out(size, '\0');
    char* p = out.data();
    auto put = [&p](std::string_view v) {
      std::memcpy(p, v.data(), v.size());
      p += v.size();
    };
    for (size_t i = 0; i < n_; ++i) {
      put(items_[i].first);
      put(": ");
      put(items_[i].second);
      put("\r\n");
    }
    return out;
  }

 private:
  static constexpr size_t kNumbers = 4;
  std::array<std::pair<std::string_view, std::string_view>, 12> items_;
  size_t n_ = 0;
  char numbers_[kNumbers][24];
  size_t numbers_used_ = 0;
};

}  // namespace

// The head fields of a whole answer from the cache or a finished flight:
// what add_key_headers() sets, plus content type, age and tier.
std::string answer_fields(const ChatContext& c, const char* cache, int64_t age_seconds, int64_t ttl_s,
                          const std::string& tier) {
  FieldList f;
  if (c.request.stream) {
    f.add("Content-Type", "text/event-stream");
    f.add("Cache-Control", "no-cache");
  } else {
    f.add("Content-Type", "application/json");
  }
  f.add("x-reprox-cache", cache);
  f.add("x-reprox-key", c.key.key);
  f.add_number("x-reprox-seed", c.key.seed);
  if (cache == std::string_view("bypass")) f.add("x-reprox-cache-reason", c.cacheability.reason);
  if (ttl_s >= 0) f.add_number("x-reprox-ttl", uint64_t(ttl_s));
  if (!c.prepared->sampling_mode.empty()) f.add("x-reprox-fallback", "greedy");
  if (age_seconds >= 0) f.add_number("Age", uint64_t(age_seconds));
  if (!tier.empty()) f.add("x-reprox-tier", tier);
  char similarity[16];
  if (c.near_hit) {
    const int n = std::snprintf(similarity, sizeof similarity, "%.3f", c.near_hit->similarity);
    f.add("x-reprox-similarity", std::string_view(similarity, size_t(std::max(0, n))));
    f.add("x-reprox-near-key", c.near_hit->key);
  }
  return f.render();
}

}  // namespace reprox
