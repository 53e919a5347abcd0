// A token bucket: `rate` tokens a second, at most `burst` saved up. Pure
// arithmetic over a value the caller keeps (and locks).
#pragma once

#include <cstdint>

namespace reprox::policy {

struct TokenBucket {
  double tokens = -1;     // < 0: new, starts full
  int64_t last_ns = 0;    // monotonic time of the last refill
};

struct TakeResult {
  bool ok = false;
  double wait_s = 0;  // when refused: how long until a token is there
};

// Refills for the time since the last call, then takes one token if there
// is one. `rate` > 0; `burst` >= 1.
TakeResult take_token(TokenBucket& bucket, int64_t now_ns, double rate, double burst);

}  // namespace reprox::policy
