#include "engine/sampling/string_format.hpp"

#include <array>
#include <cstddef>

#include "engine/sampling/internal/key_bytes.hpp"

namespace reprox::engine {

namespace {

// A format is a program of fields, read in order.
enum class Field : uint8_t {
  kLiteral,   // one fixed character
  kNumber,    // `width` decimal digits, value in [lo, hi]
  kDay,       // two digits, a day of the month read before
  kHex,       // `width` hex digits
  kFraction,  // optional: '.' and 1 to 9 digits
  kOffset,    // 'Z' (the end), or '+' / '-' and the fields after it
  kOctet,     // 1 to 3 digits, 0-255, no leading zero
};
enum Role : uint8_t { kPlain, kYear, kMonth };

struct Item {
  Field field = Field::kLiteral;
  uint8_t width = 0;
  uint16_t lo = 0, hi = 0;
  char literal = 0;
  Role role = kPlain;
};

constexpr Item lit(char c) { return Item{Field::kLiteral, 0, 0, 0, c, kPlain}; }
constexpr Item num(uint8_t width, uint16_t lo, uint16_t hi, Role role = kPlain) {
  return Item{Field::kNumber, width, lo, hi, 0, role};
}
constexpr Item hex(uint8_t width) { return Item{Field::kHex, width, 0, 0, 0, kPlain}; }
constexpr Item kDayItem{Field::kDay, 2, 1, 31, 0, kPlain};
constexpr Item kFractionItem{Field::kFraction};
constexpr Item kOffsetItem{Field::kOffset};
constexpr Item kOctetItem{Field::kOctet};

// Year 0000 is RFC 3339's but not Python's, which many clients parse with.
constexpr std::array<Item, 5> kDate = {num(4, 1, 9999, kYear), lit('-'), num(2, 1, 12, kMonth), lit('-'), kDayItem};
constexpr std::array<Item, 10> kTime = {num(2, 0, 23), lit(':'),     num(2, 0, 59),  lit(':'), num(2, 0, 59),
                                        kFractionItem, kOffsetItem, num(2, 0, 23), lit(':'), num(2, 0, 59)};
constexpr std::array<Item, 9> kUuid = {hex(8), lit('-'), hex(4), lit('-'), hex(4), lit('-'), hex(4), lit('-'), hex(12)};
constexpr std::array<Item, 7> kIpv4 = {kOctetItem, lit('.'), kOctetItem, lit('.'), kOctetItem, lit('.'), kOctetItem};

// a, then `middle`, then b.
template <size_t A, size_t B>
constexpr std::array<Item, A + 1 + B> joined(const std::array<Item, A>& a, Item middle, const std::array<Item, B>& b) {
  std::array<Item, A + 1 + B> out{};
  for (size_t i = 0; i < A; ++i) out[i] = a[i];
  out[A] = middle;
  for (size_t i = 0; i < B; ++i) out[A + 1 + i] = b[i];
  return out;
}
constexpr auto kDateTime = joined(kDate, lit('T'), kTime);

struct Program {
  const Item* items = nullptr;
  uint8_t size = 0;
};

template <size_t N>
Program of(const std::array<Item, N>& items) {
  return Program{items.data(), static_cast<uint8_t>(N)};
}

Program program(StringFormat::Kind kind) {
  switch (kind) {
    case StringFormat::kDate: return of(kDate);
    case StringFormat::kTime: return of(kTime);
    case StringFormat::kDateTime: return of(kDateTime);
    case StringFormat::kUuid: return of(kUuid);
    case StringFormat::kIpv4: return of(kIpv4);
    default: return {};
  }
}

bool leap(int year) { return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0); }

int days_in_month(int year, int month) {
  if (month == 2) return leap(year) ? 29 : 28;
  return month == 4 || month == 6 || month == 9 || month == 11 ? 30 : 31;
}

bool is_hex_digit(uint8_t b) { return (b >= '0' && b <= '9') || (b >= 'a' && b <= 'f') || (b >= 'A' && b <= 'F'); }

}  // namespace

StringFormat::Kind StringFormat::parse(std::string_view name) {
  if (name == "date") return kDate;
  if (name == "time") return kTime;
  if (name == "date-time") return kDateTime;
  if (name == "uuid") return kUuid;
  if (name == "ipv4") return kIpv4;
  return kNone;
}

void StringFormat::length_range(Kind kind, uint32_t* shortest, uint32_t* longest) {
  // time: hh:mm:ss, then up to '.' and 9 digits, then Z or +hh:mm.
  switch (kind) {
    case kDate: *shortest = *longest = 10; return;
    case kTime: *shortest = 9, *longest = 24; return;
    case kDateTime: *shortest = 20, *longest = 35; return;
    case kUuid: *shortest = *longest = 36; return;
    case kIpv4: *shortest = 7, *longest = 15; return;
    default: *shortest = 0, *longest = UINT32_MAX; return;
  }
}

void StringFormat::next_item() {
  ++item_;
  digits_ = 0;
  value_ = 0;
  in_fraction_ = false;
}

bool StringFormat::feed(uint8_t byte) {
  const Program p = program(kind_);
  const bool digit = byte >= '0' && byte <= '9';
  while (item_ < p.size) {
    const Item& it = p.items[item_];
    switch (it.field) {
      case Field::kLiteral:
        if (byte != static_cast<uint8_t>(it.literal)) return false;
        next_item();
        return true;
      case Field::kNumber:
      case Field::kDay: {
        if (!digit) return false;
        const int hi = it.field == Field::kDay ? days_in_month(year_, month_) : it.hi;
        const int value = value_ * 10 + (byte - '0');
        int scale = 1;  // what the digits still to come can add, plus one
        for (int k = digits_ + 1; k < it.width; ++k) scale *= 10;
        if (value * scale > hi || value * scale + scale - 1 < it.lo) return false;
        value_ = static_cast<uint16_t>(value);
        if (++digits_ < it.width) return true;
        if (it.role == kYear) year_ = value_;
        if (it.role == kMonth) month_ = static_cast<uint8_t>(value_);
        next_item();
        return true;
      }
      case Field::kHex:
        if (!is_hex_digit(byte)) return false;
        if (++digits_ == it.width) next_item();
        return true;
      case Field::kFraction:
        if (!in_fraction_) {
          if (byte == '.') {
            in_fraction_ = true;
            return true;
          }
          next_item();  // no fraction: the byte is the offset's
          continue;
        }
        if (digit) {
          if (digits_ >= 9) return false;
          ++digits_;
          return true;
        }
        if (digits_ == 0) return false;
        next_item();
        continue;
      case Field::kOffset:
        if (byte == 'Z') {
          item_ = p.size;
          return true;
        }
        if (byte != '+' && byte != '-') return false;
        next_item();
        return true;
      case Field::kOctet:
        if (digit) {
          if (digits_ == 3 || (digits_ > 0 && value_ == 0)) return false;
          const int value = value_ * 10 + (byte - '0');
          if (value > 255) return false;
          value_ = static_cast<uint16_t>(value);
          ++digits_;
          return true;
        }
        if (digits_ == 0) return false;
        next_item();
        continue;
    }
  }
  return false;
}

bool StringFormat::complete() const {
  const Program p = program(kind_);
  if (item_ == p.size) return true;
  return item_ + 1 == p.size && p.items[item_].field == Field::kOctet && digits_ > 0;
}

void StringFormat::append_key(std::string* out) const {
  out->push_back(static_cast<char>(kind_));
  out->push_back(static_cast<char>(item_));
  out->push_back(static_cast<char>(digits_ | (in_fraction_ << 7)));
  internal::append_bytes(out, value_, 2);
  // Past the year, only whether it is a leap year still matters.
  out->push_back(static_cast<char>(item_ > 0 && leap(year_)));
  out->push_back(static_cast<char>(month_));
}

}  // namespace reprox::engine
