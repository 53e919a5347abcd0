#include "engine/sampling/number_bounds.hpp"

#include <algorithm>

#include "engine/sampling/internal/key_bytes.hpp"

namespace reprox::engine {

namespace {

Fixed floor_whole(Fixed v) {
  Fixed q = v / kScale;
  if (v % kScale != 0 && v < 0) --q;
  return q * kScale;
}

Fixed ceil_whole(Fixed v) {
  Fixed q = v / kScale;
  if (v % kScale != 0 && v > 0) ++q;
  return q * kScale;
}

// The weight, in fixed point, of fraction digit number `digits` (1-based);
// kScale for digits 0 (a whole unit).
Fixed fraction_unit(int digits) {
  Fixed unit = kScale;
  for (int i = 0; i < digits; ++i) unit /= 10;
  return unit;
}

}  // namespace

NumberRange NumberRange::whole() const {
  NumberRange r;
  r.lo = lo == kNoLowerBound ? lo : ceil_whole(lo);
  r.hi = hi == kNoUpperBound ? hi : floor_whole(hi);
  return r;
}

bool NumberRange::empty(bool integer) const {
  const NumberRange r = integer ? whole() : *this;
  return r.lo > r.hi;
}

bool DecimalPrefix::digit(uint8_t d) {
  if (dot_) {
    if (frac_digits_ >= kMaxFraction) return false;
    ++frac_digits_;
    fraction_ += static_cast<uint32_t>(d * fraction_unit(frac_digits_));
    return true;
  }
  if (int_digits_ < 255) ++int_digits_;
  whole_ = whole_ > (kHugeWhole - d) / 10 ? kHugeWhole : whole_ * 10 + d;
  return true;
}

bool DecimalPrefix::can_reach(const NumberRange& range, bool integer) const {
  const NumberRange r = integer ? range.whole() : range;
  // The range of magnitudes that land in r with this sign.
  Fixed lo = r.lo, hi = r.hi;
  if (negative_) {
    lo = r.hi == kNoUpperBound ? kNoLowerBound : -r.hi;
    hi = r.lo == kNoLowerBound ? kNoUpperBound : -r.lo;
  }
  lo = std::max(lo, Fixed{0});
  return lo <= hi && magnitude_can_reach(lo, hi, integer);
}

bool DecimalPrefix::magnitude_can_reach(Fixed lo, Fixed hi, bool integer) const {
  // Reachable magnitudes come in intervals [a, b]; with `integer`, a, b, lo
  // and hi are whole units and only whole units are reachable, so an
  // overlap of the intervals always holds one.
  auto hits = [lo, hi](Fixed a, Fixed b) { return a <= hi && b >= lo; };
  const Fixed room = integer ? 0 : kScale - 1;  // what a fraction may add to a whole number
  const Fixed m = magnitude();
  if (int_digits_ == 0) return hits(0, kHuge);  // only a sign so far
  if (dot_) return hits(m, m + fraction_unit(frac_digits_) - 1);
  if (m == 0) return hits(0, room);   // a leading 0: only a fraction may follow
  if (m >= kHuge) return hi >= kHuge;  // past every bound
  // Stop here or write a fraction: [M, M + room]. With k more integer
  // digits: [M * 10^k, (M + 1 unit) * 10^k - 1 unit + room].
  for (Fixed a = m, b = m + room; a <= hi;) {
    if (hits(a, b)) return true;
    if (a >= kHuge) break;
    a *= 10;
    b = (b - room + kScale) * 10 - kScale + room;
  }
  return false;
}

bool DecimalPrefix::within(const NumberRange& range) const {
  const Fixed value = negative_ ? -magnitude() : magnitude();
  return value >= range.lo && value <= range.hi;
}

void DecimalPrefix::append_key(std::string* out) const {
  out->push_back(static_cast<char>(negative_ | (dot_ << 1) | ((int_digits_ != 0) << 2)));
  out->push_back(static_cast<char>(frac_digits_));
  internal::append_bytes(out, whole_, 8);
  internal::append_bytes(out, fraction_, 4);
}

}  // namespace reprox::engine
