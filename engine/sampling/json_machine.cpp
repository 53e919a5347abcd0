#include "engine/sampling/json_machine.hpp"

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
      if (byte == ']') return close();
      return begin_value(byte);
    case Mode::kValue: return begin_value(byte);
    case Mode::kKeyOrClose:
      if (byte == '}') return close();
      [[fallthrough]];
    case Mode::kKey:
      if (byte != '"') return false;
      mode_ = Mode::kString;
      in_key_ = true;
      return true;
    case Mode::kColon:
      if (byte != ':') return false;
      mode_ = Mode::kValue;
      return true;
    case Mode::kAfterValue: {
      const char top = stack_[depth_ - 1];
      if (byte == ',') {
        mode_ = top == 'o' ? Mode::kKey : Mode::kValue;
        return true;
      }
      if ((byte == '}' && top == 'o') || (byte == ']' && top == 'a')) return close();
      return false;
    }
    default: return false;
  }
}

bool JsonMachine::begin_value(uint8_t byte) {
  switch (byte) {
    case '{': return open('o');
    case '[': return open('a');
    case '"':
      mode_ = Mode::kString;
      in_key_ = false;
      return true;
    case '-': mode_ = Mode::kNumberMinus; return true;
    case '0': mode_ = Mode::kNumberZero; return true;
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
      return true;
  }
}

bool JsonMachine::open(char container) {
  if (depth_ >= kMaxDepth) return false;
  stack_[depth_++] = container;
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
    if (in_key_) mode_ = Mode::kColon;
    else end_value();
    return true;
  }
  if (byte == '\\') {
    mode_ = Mode::kEscape;
    return true;
  }
  if (byte < 0x20) return false;
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
  const bool digit = is_digit(byte);
  const bool exponent = byte == 'e' || byte == 'E';
  switch (mode_) {
    case Mode::kNumberMinus:
      if (!digit) return false;
      mode_ = byte == '0' ? Mode::kNumberZero : Mode::kNumberInt;
      return true;
    case Mode::kNumberDot:
      if (!digit) return false;
      mode_ = Mode::kNumberFrac;
      return true;
    case Mode::kNumberExp:
      if (byte == '+' || byte == '-') {
        mode_ = Mode::kNumberExpSign;
        return true;
      }
      [[fallthrough]];
    case Mode::kNumberExpSign:
      if (!digit) return false;
      mode_ = Mode::kNumberExpDigits;
      return true;
    case Mode::kNumberZero:
    case Mode::kNumberInt:
    case Mode::kNumberFrac:
      if (digit && mode_ != Mode::kNumberZero) return true;
      if (byte == '.' && mode_ != Mode::kNumberFrac) {
        mode_ = Mode::kNumberDot;
        return true;
      }
      if (exponent) {
        mode_ = Mode::kNumberExp;
        return true;
      }
      break;
    case Mode::kNumberExpDigits:
      if (digit) return true;
      break;
    default: return false;
  }
  // The number ended before this byte (numbers live inside containers).
  end_value();
  return feed_structural(byte);
}

void JsonMachine::append_key(std::string* out) const {
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
  out->append(stack_, depth_);
}

}  // namespace reprox::engine
