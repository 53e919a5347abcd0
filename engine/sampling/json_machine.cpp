#include "engine/sampling/json_machine.hpp"

#include "engine/sampling/internal/key_bytes.hpp"
#include "engine/sampling/internal/sorted_prefix.hpp"

namespace reprox::engine {

namespace {

constexpr std::string_view kLiterals[] = {"true", "false", "null"};

bool is_whitespace(uint8_t b) { return b == ' ' || b == '\n' || b == '\r' || b == '\t'; }
bool is_digit(uint8_t b) { return b >= '0' && b <= '9'; }
bool is_hex(uint8_t b) { return is_digit(b) || (b >= 'a' && b <= 'f') || (b >= 'A' && b <= 'F'); }

}  // namespace

bool JsonMachine::feed(std::string_view bytes) {
  for (const char c : bytes)
    if (!feed(static_cast<uint8_t>(c))) return false;
  return true;
}

bool JsonMachine::feed(uint8_t byte) {
  switch (mode_) {
    case Mode::kString: return feed_string(byte);
    case Mode::kEscape:
      if (byte == 'u') {
        mode_ = Mode::kUnicode;
        hex_left_ = 4;
        return true;
      }
      if (byte != '"' && byte != '\\' && byte != '/' && byte != 'b' && byte != 'f' && byte != 'n' &&
          byte != 'r' && byte != 't')
        return false;
      mode_ = Mode::kString;
      return true;
    case Mode::kUnicode:
      if (!is_hex(byte)) return false;
      // A length-bounded string counts \u escapes as one code point each,
      // so it takes none in D000-DFFF, where surrogate pairs live.
      if (hex_left_ == 4 && (byte == 'd' || byte == 'D') && length_bounds()) return false;
      if (--hex_left_ == 0) mode_ = Mode::kString;
      return true;
    case Mode::kLiteral: {
      const std::string_view literal = kLiterals[literal_];
      if (byte != static_cast<uint8_t>(literal[literal_pos_])) return false;
      if (++literal_pos_ == literal.size()) end_value();
      return true;
    }
    case Mode::kNumberMinus:
    case Mode::kNumberZero:
    case Mode::kNumberInt:
    case Mode::kNumberDot:
    case Mode::kNumberFrac:
    case Mode::kNumberExp:
    case Mode::kNumberExpSign:
    case Mode::kNumberExpDigits: return feed_number(byte);
    case Mode::kKeyName: return feed_key_name(byte);
    case Mode::kEnumValue: return feed_enum_value(byte);
    case Mode::kDone: return false;
    default: return feed_structural(byte);
  }
}

bool JsonMachine::feed_structural(uint8_t byte) {
  if (is_whitespace(byte)) {
    if (whitespace_run_ >= kMaxWhitespaceRun) return false;
    ++whitespace_run_;
    return true;
  }
  whitespace_run_ = 0;
  switch (mode_) {
    case Mode::kStart: return byte == '{' && open('o');
    case Mode::kValueOrClose:
      if (byte == ']') return items_enough() && close();
      return take_item() && begin_value(byte);
    case Mode::kValue: return begin_value(byte);
    case Mode::kKeyOrClose:
      if (byte == '}') return may_close_object() && close();
      [[fallthrough]];
    case Mode::kKey:
      if (byte != '"') return false;
      if (schema_ && !schema_->node(node_[depth_ - 1]).free_object) {
        if (next_[depth_ - 1] >= key_window_end()) return false;  // no property may come
        mode_ = Mode::kKeyName;
        lo_ = 0;
        hi_ = static_cast<uint16_t>(schema_->node(node_[depth_ - 1]).names.size());
        pos_ = 0;
        return true;
      }
      mode_ = Mode::kString;
      in_key_ = true;
      return true;
    case Mode::kColon:
      if (byte != ':') return false;
      mode_ = Mode::kValue;
      return true;
    case Mode::kAfterValue: {
      const char top = this->top();
      if (byte == ',') {
        // A schema object takes a comma only while some property may still come.
        if (top == 'o' && schema_ && !schema_->node(node_[depth_ - 1]).free_object &&
            next_[depth_ - 1] >= key_window_end())
          return false;
        mode_ = top == 'o' ? Mode::kKey : Mode::kValue;
        if (schema_ && top == 'a') {
          if (!take_item()) return false;
          value_node_ = schema_->node(node_[depth_ - 1]).items;
        }
        return true;
      }
      if (byte == '}' && top == 'o') return may_close_object() && close();
      if (byte == ']' && top == 'a') return items_enough() && close();
      return false;
    }
    default: return false;
  }
}

bool JsonMachine::begin_value(uint8_t byte) {
  if (schema_) {
    const JsonSchema::Node& n = schema_->node(value_node_);
    if (!n.literals.empty()) {
      mode_ = Mode::kEnumValue;
      lo_ = 0;
      hi_ = static_cast<uint16_t>(n.literals.size());
      pos_ = 0;
      return feed_enum_value(byte);
    }
    if (!begin_schema_value(byte)) return false;
  }
  switch (byte) {
    case '{': return open('o');
    case '[': return open('a');
    case '"':
      mode_ = Mode::kString;
      in_key_ = false;
      length_ = 0;
      bounded_string_ = schema_ && schema_->node(value_node_).bounds_length();
      format_ = StringFormat(schema_ ? schema_->node(value_node_).format : StringFormat::kNone);
      return true;
    case '-': mode_ = Mode::kNumberMinus; return begin_number(byte);
    case '0': mode_ = Mode::kNumberZero; return begin_number(byte);
    case 't':
    case 'f':
    case 'n':
      mode_ = Mode::kLiteral;
      literal_ = byte == 't' ? 0 : byte == 'f' ? 1 : 2;
      literal_pos_ = 1;
      return true;
    default:
      if (byte < '1' || byte > '9') return false;
      mode_ = Mode::kNumberInt;
      return begin_number(byte);
  }
}

bool JsonMachine::open(char container) {
  if (depth_ >= kMaxDepth) return false;
  if (schema_) {
    node_[depth_] = value_node_;
    next_[depth_] = 0;
    if (container == 'a') value_node_ = schema_->node(value_node_).items;
  }
  if (container == 'o') objects_ |= 1u << depth_;
  else objects_ &= ~(1u << depth_);
  ++depth_;
  mode_ = container == 'o' ? Mode::kKeyOrClose : Mode::kValueOrClose;
  return true;
}

bool JsonMachine::close() {
  --depth_;
  end_value();
  return true;
}

void JsonMachine::end_value() { mode_ = depth_ == 0 ? Mode::kDone : Mode::kAfterValue; }

bool JsonMachine::feed_string(uint8_t byte) {
  if (utf8_left_ > 0) {
    if (byte < utf8_lo_ || byte > utf8_hi_) return false;
    --utf8_left_;
    utf8_lo_ = 0x80;
    utf8_hi_ = 0xBF;
    return true;
  }
  if (byte == '"') {
    if (in_key_) {
      mode_ = Mode::kColon;
      value_node_ = 0;  // a free object's values: any JSON
    } else {
      if (!string_long_enough() || (formatted() && !format_.complete())) return false;
      end_value();
    }
    return true;
  }
  if (byte < 0x20 || !take_code_point()) return false;  // every other byte begins a code point
  if (formatted()) return byte != '\\' && format_.feed(byte);
  if (byte == '\\') {
    mode_ = Mode::kEscape;
    return true;
  }
  if (byte < 0x80) return true;
  // UTF-8 lead bytes (RFC 3629): no overlong forms, no surrogates, <= U+10FFFF.
  if (byte >= 0xC2 && byte <= 0xDF) utf8_left_ = 1;
  else if (byte >= 0xE0 && byte <= 0xEF) utf8_left_ = 2;
  else if (byte >= 0xF0 && byte <= 0xF4) utf8_left_ = 3;
  else return false;
  if (byte == 0xE0) utf8_lo_ = 0xA0;
  if (byte == 0xED) utf8_hi_ = 0x9F;
  if (byte == 0xF0) utf8_lo_ = 0x90;
  if (byte == 0xF4) utf8_hi_ = 0x8F;
  return true;
}

bool JsonMachine::feed_number(uint8_t byte) {
  const JsonSchema::Node* bounds = number_bounds();
  if (bounds && (byte == 'e' || byte == 'E')) return false;  // a bounded number has no exponent
  switch (step_number(byte)) {
    case 1:
      if (!bounds) return true;
      if (byte == '.') number_.dot();
      else if (!number_.digit(static_cast<uint8_t>(byte - '0'))) return false;
      return number_.can_reach(bounds->range, integer_);
    case 0:
      if (bounds && !number_.within(bounds->range)) return false;
      end_value();
      return feed_structural(byte);
    default: return false;
  }
}

int JsonMachine::step_number(uint8_t byte) {
  const bool digit = is_digit(byte);
  const bool exponent = byte == 'e' || byte == 'E';
  switch (mode_) {
    case Mode::kNumberMinus:
      if (!digit) return -1;
      mode_ = byte == '0' ? Mode::kNumberZero : Mode::kNumberInt;
      return 1;
    case Mode::kNumberDot:
      if (!digit) return -1;
      mode_ = Mode::kNumberFrac;
      return 1;
    case Mode::kNumberExp:
      if (byte == '+' || byte == '-') {
        mode_ = Mode::kNumberExpSign;
        return 1;
      }
      [[fallthrough]];
    case Mode::kNumberExpSign:
      if (!digit) return -1;
      mode_ = Mode::kNumberExpDigits;
      return 1;
    case Mode::kNumberZero:
    case Mode::kNumberInt:
    case Mode::kNumberFrac:
      if (digit && mode_ != Mode::kNumberZero) return 1;
      if (byte == '.' && mode_ != Mode::kNumberFrac && !integer_) {
        mode_ = Mode::kNumberDot;
        return 1;
      }
      if (exponent && !integer_) {
        mode_ = Mode::kNumberExp;
        return 1;
      }
      break;
    case Mode::kNumberExpDigits:
      if (digit) return 1;
      break;
    default: return -1;
  }
  return 0;  // numbers live inside containers: a structural byte may follow
}

void JsonMachine::append_key(std::string* out, uint32_t horizon) const {
  out->push_back(static_cast<char>(mode_));
  out->push_back(static_cast<char>(whitespace_run_));
  switch (mode_) {
    case Mode::kString:
      out->push_back(static_cast<char>(in_key_));
      out->push_back(static_cast<char>(utf8_left_));
      out->push_back(static_cast<char>(utf8_lo_));
      out->push_back(static_cast<char>(utf8_hi_));
      break;
    case Mode::kEscape:
    case Mode::kUnicode:
      out->push_back(static_cast<char>(in_key_));
      out->push_back(static_cast<char>(hex_left_));
      break;
    case Mode::kLiteral:
      out->push_back(static_cast<char>(literal_));
      out->push_back(static_cast<char>(literal_pos_));
      break;
    default: break;
  }
  out->push_back(static_cast<char>(depth_));
  internal::append_bytes(out, depth_ == 32 ? objects_ : objects_ & ((1u << depth_) - 1), 4);
  if (!schema_) return;
  auto put16 = [out](uint16_t v) { internal::append_bytes(out, v, 2); };
  out->push_back(static_cast<char>(integer_));
  put16(value_node_);
  if (mode_ == Mode::kKeyName || mode_ == Mode::kEnumValue) {
    put16(lo_);
    put16(hi_);
    put16(pos_);
  }
  // A count matters as far as its minimum, and as the room left below its
  // maximum, which `horizon` bytes (each at most one code point or item) can
  // use up only so far.
  auto put_count = [&](uint32_t count, uint32_t min, uint32_t max) {
    internal::append_bytes(out, std::min(count, min), 4);
    internal::append_bytes(out, std::min(max - count, horizon), 4);
  };
  if ((mode_ == Mode::kString || mode_ == Mode::kEscape || mode_ == Mode::kUnicode) && length_bounds()) {
    const JsonSchema::Node& n = *length_bounds();
    put_count(length_, n.min_length, n.max_length);
  }
  if (mode_ == Mode::kString && formatted()) format_.append_key(out);
  if (mode_ >= Mode::kNumberMinus && mode_ <= Mode::kNumberExpDigits && number_bounds()) number_.append_key(out);
  for (uint8_t d = 0; d < depth_; ++d) {
    put16(node_[d]);
    const JsonSchema::Node& n = schema_->node(node_[d]);
    const bool counted_array = !((objects_ >> d) & 1u) && n.bounds_items();
    if (counted_array) put_count(next_[d], n.min_items, n.max_items);
    else put16(next_[d]);
  }
}

bool JsonMachine::begin_schema_value(uint8_t byte) {
  const JsonSchema::Node& n = schema_->node(value_node_);
  uint8_t bit;
  switch (byte) {
    case '{': bit = JsonSchema::kObject; break;
    case '[': bit = JsonSchema::kArray; break;
    case '"': bit = JsonSchema::kString; break;
    case 't':
    case 'f': bit = JsonSchema::kBoolean; break;
    case 'n': bit = JsonSchema::kNull; break;
    default:
      if (byte != '-' && !is_digit(byte)) return true;  // not a value: begin_value refuses it
      bit = (n.types & JsonSchema::kNumber) ? JsonSchema::kNumber : JsonSchema::kInteger;
  }
  if (!(n.types & bit)) return false;
  int index = 0;
  while (!((bit >> index) & 1)) ++index;
  value_node_ = n.by_type[index];
  integer_ = bit == JsonSchema::kInteger;
  return true;
}

size_t JsonMachine::key_window_end() const {
  const auto& props = schema_->node(node_[depth_ - 1]).properties;
  for (size_t i = next_[depth_ - 1]; i < props.size(); ++i)
    if (props[i].required) return i + 1;
  return props.size();
}

bool JsonMachine::may_close_object() const {
  if (!schema_) return true;
  const JsonSchema::Node& n = schema_->node(node_[depth_ - 1]);
  if (n.free_object) return true;
  if (n.object_union()) return false;  // no branch settled yet
  for (size_t i = next_[depth_ - 1]; i < n.properties.size(); ++i)
    if (n.properties[i].required) return false;
  return true;
}

bool JsonMachine::feed_key_name(uint8_t byte) {
  const JsonSchema::Node& n = schema_->node(node_[depth_ - 1]);
  const auto& names = n.names;  // sorted (name, property index)
  const size_t first = next_[depth_ - 1], end = key_window_end();
  auto may_come = [&](size_t k) { return names[k].second >= first && names[k].second < end; };
  if (byte == '"') {  // the name that ends here sorts first in the range
    if (lo_ >= hi_ || names[lo_].first.size() != pos_ || !may_come(lo_)) return false;
    const uint16_t property = names[lo_].second;
    next_[depth_ - 1] = static_cast<uint16_t>(property + 1);
    value_node_ = n.properties[property].node;
    mode_ = Mode::kColon;
    if (n.object_union() && n.first_branch[property] != 0) settle_branch(n.first_branch[property]);
    return true;
  }
  const auto [lo, hi] =
      internal::narrow_by_byte(names, lo_, hi_, pos_, byte, [](const auto& entry) -> const std::string& {
        return entry.first;
      });
  bool any = false;
  for (uint32_t k = lo; k < hi && !any; ++k) any = may_come(k);
  if (!any) return false;
  lo_ = static_cast<uint16_t>(lo);
  hi_ = static_cast<uint16_t>(hi);
  ++pos_;
  return true;
}

bool JsonMachine::feed_enum_value(uint8_t byte) {
  const auto& literals = schema_->node(value_node_).literals;  // sorted
  const auto [lo, hi] = internal::narrow_by_byte(literals, lo_, hi_, pos_, byte, internal::itself);
  if (lo < hi) {
    lo_ = static_cast<uint16_t>(lo);
    hi_ = static_cast<uint16_t>(hi);
    ++pos_;
    return true;
  }
  // No value goes on with this byte: one may have ended before it.
  if (lo_ >= hi_ || literals[lo_].size() != pos_) return false;
  if (const auto& branches = schema_->node(value_node_).literal_branch; !branches.empty()) settle_branch(branches[lo_]);
  end_value();
  return feed_structural(byte);
}

bool JsonMachine::take_item() {
  if (!schema_) return true;
  const JsonSchema::Node& n = schema_->node(node_[depth_ - 1]);
  if (!n.bounds_items()) return true;
  uint16_t& items = next_[depth_ - 1];
  if (items >= n.max_items) return false;
  if (items < UINT16_MAX) ++items;  // minItems is at most 65535 (json_schema.cpp)
  return true;
}

bool JsonMachine::items_enough() const {
  return !schema_ || next_[depth_ - 1] >= schema_->node(node_[depth_ - 1]).min_items;
}

const JsonSchema::Node* JsonMachine::length_bounds() const {
  return bounded_string_ && !in_key_ ? &schema_->node(value_node_) : nullptr;
}

bool JsonMachine::take_code_point() {
  const JsonSchema::Node* n = length_bounds();
  if (!n) return true;
  if (length_ >= n->max_length) return false;
  ++length_;
  return true;
}

bool JsonMachine::string_long_enough() const {
  const JsonSchema::Node* n = length_bounds();
  return !n || length_ >= n->min_length;
}

const JsonSchema::Node* JsonMachine::number_bounds() const {
  if (!schema_) return nullptr;
  const JsonSchema::Node& n = schema_->node(value_node_);
  return n.range.bounded() ? &n : nullptr;
}

bool JsonMachine::begin_number(uint8_t byte) {
  const JsonSchema::Node* bounds = number_bounds();
  if (!bounds) return true;
  number_.begin();
  if (byte == '-') number_.negate();
  else number_.digit(static_cast<uint8_t>(byte - '0'));
  return number_.can_reach(bounds->range, integer_);
}

void JsonMachine::settle_branch(uint16_t branch) {
  node_[depth_ - 1] = branch;
  next_[depth_ - 1] = 1;  // its first property was just read
}

}  // namespace reprox::engine
