// A byte-at-a-time recognizer of one JSON object (RFC 8259), for JSON mode:
// feed() answers whether the bytes so far can still begin such a document.
//
// Accepted: optional whitespace, then one object, nothing after it. Inside,
// any JSON value. Strings must be valid UTF-8 and may not hold raw control
// characters. Two bounds keep a model from running away inside the grammar:
// containers nest at most kMaxDepth deep, and a run of whitespace between
// tokens is at most kMaxWhitespaceRun bytes (room for pretty-printed JSON).
//
// With a JsonSchema (json_schema.hpp) the object must also follow it: keys
// in the schema's order, required ones present, values of the types,
// items, enums and bounds it names. A bounded number never takes a digit
// after which no number within its bounds can be completed.
//
// A JsonMachine is a small value (about 200 bytes; no heap): copy it to try
// a continuation. Not thread-safe; copies are independent.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "engine/sampling/json_schema.hpp"

namespace reprox::engine {

class JsonMachine {
 public:
  static constexpr int kMaxDepth = 32;
  static constexpr int kMaxWhitespaceRun = 24;

  JsonMachine() = default;
  // Follows `schema` too; it must outlive this machine and its copies.
  explicit JsonMachine(const JsonSchema* schema) : schema_(schema), value_node_(schema ? schema->root() : 0) {}

  // Consumes one byte; false (and the state is then unspecified) when no
  // document in the language begins with the bytes so far plus this one.
  bool feed(uint8_t byte);
  bool feed(std::string_view bytes);
  // The bytes so far form a whole document: nothing more may follow.
  bool complete() const { return mode_ == Mode::kDone; }
  // Appends a byte string that identifies this state: equal keys accept
  // exactly the same continuations of up to `horizon` bytes (all of them
  // with the default). Counts toward a bound (code points, items) enter the
  // key only as far as `horizon` bytes can reach.
  void append_key(std::string* out, uint32_t horizon = UINT32_MAX) const;

 private:
  enum class Mode : uint8_t {
    kStart,          // before the top-level '{'
    kValue,          // a value must come (after ':' or ',' in an array)
    kValueOrClose,   // after '[': a value or ']'
    kKeyOrClose,     // after '{': a key or '}'
    kKey,            // after ',' in an object: a key
    kColon,          // after a key
    kAfterValue,     // ',' or the container's closing bracket
    kString,         // inside a string
    kEscape,         // after '\' in a string
    kUnicode,        // inside \uXXXX; hex_left digits to go
    kNumberMinus,    // after '-'
    kNumberZero,     // after a leading 0
    kNumberInt,      // in the integer digits
    kNumberDot,      // after '.'
    kNumberFrac,     // in the fraction digits
    kNumberExp,      // after 'e' or 'E'
    kNumberExpSign,  // after the exponent's sign
    kNumberExpDigits,
    kLiteral,        // inside true, false or null
    kKeyName,        // schema: inside a key, names_[lo_, hi_) still match
    kEnumValue,      // schema: inside an enum value, literals[lo_, hi_) still match
    kDone,
  };

  bool feed_structural(uint8_t byte);
  bool feed_string(uint8_t byte);
  bool feed_number(uint8_t byte);
  int step_number(uint8_t byte);  // 1 taken, 0 the number ended before it, -1 refused
  bool begin_value(uint8_t byte);
  bool open(char container);
  char top() const { return (objects_ >> (depth_ - 1)) & 1u ? 'o' : 'a'; }
  bool close();  // the caller checked the bracket against the stack's top
  void end_value();
  // Schema checks and steps (no-ops without a schema).
  bool begin_schema_value(uint8_t byte);
  bool may_close_object() const;
  bool feed_key_name(uint8_t byte);
  bool feed_enum_value(uint8_t byte);
  size_t key_window_end() const;  // one past the last property that may come next
  // An anyOf of objects: the open object is `branch`, past its first property.
  void settle_branch(uint16_t branch);
  // Bounds: items of the innermost array, code points of a value string, the
  // value of a number. Each is true when nothing bounds it.
  bool take_item();
  bool items_enough() const;
  const JsonSchema::Node* length_bounds() const;  // the value string's node when it bounds length
  bool take_code_point();
  bool string_long_enough() const;
  const JsonSchema::Node* number_bounds() const;  // the number's node when it bounds the value
  bool begin_number(uint8_t byte);
  bool formatted() const { return !in_key_ && format_.kind() != StringFormat::kNone; }

  Mode mode_ = Mode::kStart;
  bool in_key_ = false;       // the string being read is an object key
  uint8_t hex_left_ = 0;      // kUnicode
  uint8_t literal_ = 0;       // kLiteral: which of true/false/null
  uint8_t literal_pos_ = 0;   // kLiteral: bytes matched so far
  uint8_t utf8_left_ = 0;     // continuation bytes still due in a string
  uint8_t utf8_lo_ = 0x80;    // range of the next continuation byte
  uint8_t utf8_hi_ = 0xBF;
  uint8_t whitespace_run_ = 0;
  uint8_t depth_ = 0;
  uint32_t objects_ = 0;       // bit d: the container open at depth d is an object (else an array)
  bool bounded_string_ = false;  // the value string being read has minLength / maxLength
  // With a schema:
  const JsonSchema* schema_ = nullptr;
  bool integer_ = false;        // the number being read must be an integer
  uint16_t value_node_ = 0;     // the node of the next value
  uint16_t lo_ = 0, hi_ = 0, pos_ = 0;  // kKeyName, kEnumValue: the range still matching
  static_assert(kMaxDepth <= 32, "objects_ holds one bit per depth");
  uint16_t node_[kMaxDepth] = {};  // each open container's node
  uint16_t next_[kMaxDepth] = {};  // each open object's next property index; a bounded array's items
  uint32_t length_ = 0;            // code points of a length-bounded value string so far
  DecimalPrefix number_;           // a bounded number so far
  StringFormat format_;            // the value string's enforced format (kNone: none)
};

}  // namespace reprox::engine
