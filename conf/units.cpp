// Sizes and durations with units; see units.hpp. Numbers are read as exact
// decimals (digits and a scale), so "1.5GB" is 1500000000 bytes exactly and
// nothing is lost to floating point.
#include "conf/units.hpp"

#include <cctype>
#include <limits>
#include <stdexcept>
#include <string>

namespace reprox {

namespace {

using Wide = unsigned __int128;

constexpr const char* kSizeUnits = "B, KB, MB, GB, TB, KiB, MiB, GiB, TiB";
constexpr const char* kDurationUnits = "ms, s, m, h, d";
constexpr int kMaxDecimals = 18;
const Wide kMaxMantissa = Wide(10'000'000'000'000'000'000ull) * 1'000'000;  // 1e25

// An exact decimal: mantissa / 10^scale.
struct Decimal {
  Wide mantissa = 0;
  int scale = 0;
};

Wide pow10(int n) {
  Wide p = 1;
  while (n-- > 0) p *= 10;
  return p;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Builds the error for `kind` ("size", "duration") of `text`.
std::invalid_argument bad(const char* kind, std::string_view text, const std::string& reason) {
  return std::invalid_argument(std::string("bad ") + kind + " '" + std::string(text) + "'" + reason);
}

// Reads digits with an optional fraction from the front of `rest`; throws
// (through `fail`) on no digits, too many decimals or too many digits.
template <typename Fail>
Decimal read_number(std::string_view& rest, const Fail& fail) {
  Decimal d;
  bool any = false, point = false;
  while (!rest.empty() && (std::isdigit(static_cast<unsigned char>(rest.front())) || rest.front() == '.')) {
    char c = rest.front();
    rest.remove_prefix(1);
    if (c == '.') {
      if (point) fail(": not a number");
      point = true;
      continue;
    }
    any = true;
    if (point && ++d.scale > kMaxDecimals) fail(": too many decimal places");
    d.mantissa = d.mantissa * 10 + Wide(c - '0');
    if (d.mantissa > kMaxMantissa) fail(": too large");
  }
  if (!any) fail(": not a number");
  return d;
}

// The letters at the front of `rest` (after optional spaces), lower-cased.
std::string read_unit(std::string_view& rest) {
  rest = trim(rest);
  size_t n = 0;
  while (n < rest.size() && std::isalpha(static_cast<unsigned char>(rest[n]))) ++n;
  std::string unit = lower(rest.substr(0, n));
  rest.remove_prefix(n);
  rest = trim(rest);
  return unit;
}

// Bytes per size unit; 0 for an unknown unit.
uint64_t size_multiplier(const std::string& unit) {
  constexpr uint64_t k = 1000, ki = 1024;
  if (unit.empty() || unit == "b") return 1;
  if (unit == "kb") return k;
  if (unit == "mb") return k * k;
  if (unit == "gb") return k * k * k;
  if (unit == "tb") return k * k * k * k;
  if (unit == "kib") return ki;
  if (unit == "mib") return ki * ki;
  if (unit == "gib") return ki * ki * ki;
  if (unit == "tib") return ki * ki * ki * ki;
  return 0;
}

// Milliseconds per duration unit; 0 for an unknown unit.
uint64_t duration_multiplier(const std::string& unit) {
  if (unit == "ms") return 1;
  if (unit == "s") return 1000;
  if (unit == "m") return 60 * 1000;
  if (unit == "h") return 3600 * 1000;
  if (unit == "d") return 24 * 3600 * 1000;
  return 0;
}

// Rejects what no number or unit can fix: empty text and a minus sign.
std::string_view checked_text(const char* kind, std::string_view text) {
  std::string_view t = trim(text);
  if (t.empty()) throw bad(kind, text, ": empty");
  if (t.front() == '-') throw bad(kind, text, ": negative");
  return t;
}

uint64_t unit_milliseconds(TimeUnit unit) { return unit == TimeUnit::seconds ? 1000 : 1; }

}  // namespace

uint64_t parse_size(std::string_view text) {
  auto fail = [&](const std::string& reason) { throw bad("size", text, reason); };
  std::string_view rest = checked_text("size", text);
  Decimal d = read_number(rest, fail);
  std::string unit = read_unit(rest);
  uint64_t multiplier = size_multiplier(unit);
  if (multiplier == 0 || !rest.empty()) fail(std::string(" (units: ") + kSizeUnits + ")");
  Wide scaled = d.mantissa * multiplier;
  Wide divisor = pow10(d.scale);
  if (scaled % divisor != 0) fail(": not a whole number of bytes");
  Wide bytes = scaled / divisor;
  if (bytes > std::numeric_limits<uint64_t>::max()) fail(": too large");
  return static_cast<uint64_t>(bytes);
}

int64_t parse_duration(std::string_view text, TimeUnit unit) {
  auto fail = [&](const std::string& reason) { throw bad("duration", text, reason); };
  std::string_view rest = checked_text("duration", text);
  const Wide limit = Wide(std::numeric_limits<int64_t>::max()) * unit_milliseconds(unit);
  Wide total_ms = 0;
  bool first = true;
  while (!rest.empty()) {
    Decimal d = read_number(rest, fail);
    std::string name = read_unit(rest);
    uint64_t multiplier = name.empty() && first && rest.empty() ? unit_milliseconds(unit) : duration_multiplier(name);
    if (multiplier == 0) fail(std::string(" (units: ") + kDurationUnits + ")");
    Wide part = d.mantissa * multiplier;
    if (part % pow10(d.scale) != 0) fail(": not a whole number of milliseconds");
    total_ms += part / pow10(d.scale);
    if (total_ms > limit) fail(": too large");
    first = false;
  }
  if (total_ms % unit_milliseconds(unit) != 0) fail(std::string(": not a whole number of ") + unit_name(unit));
  return static_cast<int64_t>(total_ms / unit_milliseconds(unit));
}

const char* unit_name(TimeUnit unit) { return unit == TimeUnit::seconds ? "seconds" : "milliseconds"; }

}  // namespace reprox
