#include "policies/token_bucket.hpp"

#include <algorithm>

namespace reprox::policy {

TakeResult take_token(TokenBucket& b, int64_t now_ns, double rate, double burst) {
  if (b.tokens < 0) {
    b.tokens = burst;
  } else if (now_ns > b.last_ns) {
    b.tokens = std::min(burst, b.tokens + double(now_ns - b.last_ns) * 1e-9 * rate);
  }
  b.last_ns = std::max(b.last_ns, now_ns);
  if (b.tokens >= 1) {
    b.tokens -= 1;
    return {true, 0};
  }
  return {false, (1 - b.tokens) / rate};
}

}  // namespace reprox::policy
