// Human units for sizes and durations in the configuration: "16GiB",
// "512MB", "1.5GB", "90s", "1h30m". Pure functions; a malformed, negative,
// empty or too large value throws std::invalid_argument whose message quotes
// the text, e.g. "bad size '16QB' (units: B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)".
#pragma once

#include <cstdint>
#include <string_view>

namespace reprox {

// A size in bytes. A plain number is bytes; KB, MB, GB, TB are powers of
// 1000, KiB, MiB, GiB, TiB powers of 1024 (B is bytes). The unit is
// case-insensitive and may follow a space. A decimal number is accepted when
// the result is a whole number of bytes ("1.5KiB" is 1536).
uint64_t parse_size(std::string_view text);

// The unit a duration key is kept in; a plain number is read in it.
enum class TimeUnit { milliseconds, seconds };

// A duration in `unit`: one or more NUMBER UNIT parts ("250ms", "90s",
// "15m", "24h", "7d", "1h30m"), units ms, s, m, h, d (case-insensitive),
// or a plain number in `unit`. The total must be a whole number of `unit`
// ("1500ms" is not a whole number of seconds).
int64_t parse_duration(std::string_view text, TimeUnit unit);

// "seconds" or "milliseconds", for messages.
const char* unit_name(TimeUnit unit);

}  // namespace reprox
