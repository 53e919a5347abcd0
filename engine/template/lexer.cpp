#include "engine/template/lexer.hpp"

#include <algorithm>
#include <stdexcept>
#include <string_view>

#include "engine/template/py_text.hpp"

namespace reprox::tmpl {
namespace {

std::string normalize_newlines(const std::string& src) {
  std::string out;
  out.reserve(src.size());
  for (size_t i = 0; i < src.size(); ++i) {
    if (src[i] == '\r') {
      out.push_back('\n');
      if (i + 1 < src.size() && src[i + 1] == '\n') ++i;
    } else {
      out.push_back(src[i]);
    }
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();  // keep_trailing_newline=False
  return out;
}

// Length in bytes of the Python whitespace code point at s[i], or 0.
size_t space_at(std::string_view s, size_t i) {
  auto c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) return py::is_space(c) ? 1 : 0;
  size_t len = (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
  if (i + len > s.size()) return 0;
  auto cps = py::decode(s.substr(i, len));
  return cps.size() == 1 && py::is_space(cps[0]) ? len : 0;
}

std::string rstrip_space(std::string_view s) { return py::strip(s, py::StripSide::Right); }

bool all_space(std::string_view s) {
  if (s.empty()) return false;  // Jinja2 uses \s+ here
  for (size_t i = 0; i < s.size();) {
    size_t n = space_at(s, i);
    if (!n) return false;
    i += n;
  }
  return true;
}

class Lexer {
 public:
  explicit Lexer(const std::string& source) : src_(normalize_newlines(source)) {
    line_starts_.push_back(0);
    for (size_t i = 0; i < src_.size(); ++i)
      if (src_[i] == '\n') line_starts_.push_back(i + 1);
  }

  std::vector<Token> run() {
    bool line_starting = true;
    while (pos_ < src_.size()) {
      size_t k = find_tag_start(pos_);
      if (k == std::string::npos) {
        push(Token::Type::Text, src_.substr(pos_), pos_);
        pos_ = src_.size();
        break;
      }
      char kind = src_[k + 1];
      char sign = k + 2 < src_.size() && (src_[k + 2] == '-' || src_[k + 2] == '+') ? src_[k + 2] : 0;
      std::string text = src_.substr(pos_, k - pos_);
      if (sign == '-') {
        text = rstrip_space(text);
      } else if (sign != '+' && kind != '{') {  // lstrip_blocks: blocks and comments only
        size_t l_pos = text.rfind('\n');
        l_pos = l_pos == std::string::npos ? 0 : l_pos + 1;
        if ((l_pos > 0 || line_starting) && all_space(std::string_view(text).substr(l_pos))) text.resize(l_pos);
      }
      size_t text_at = pos_;
      size_t raw_body = kind == '%' ? match_raw_begin(k) : std::string::npos;
      if (!text.empty()) push(Token::Type::Text, std::move(text), text_at);
      pos_ = k + 2 + (sign ? 1 : 0);
      if (raw_body != std::string::npos) {
        pos_ = raw_body;
        lex_raw_body(k);
      } else if (kind == '#') {
        lex_comment(k);
      } else {
        lex_tag(kind == '%', k);
      }
      line_starting = pos_ > 0 && src_[pos_ - 1] == '\n';
    }
    Token eof{Token::Type::Eof, "", 0, 0};
    position(src_.size(), &eof.line, &eof.col);
    out_.push_back(eof);
    return std::move(out_);
  }

 private:
  [[noreturn]] void fail(size_t at, const std::string& what) const {
    int line, col;
    position(at, &line, &col);
    throw std::runtime_error("line " + std::to_string(line) + ", column " + std::to_string(col) + ": " + what);
  }

  void position(size_t at, int* line, int* col) const {
    auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), at);
    *line = static_cast<int>(it - line_starts_.begin());
    *col = static_cast<int>(at - *(it - 1)) + 1;
  }

  void push(Token::Type t, std::string text, size_t at) {
    Token tok{t, std::move(text), 0, 0};
    position(at, &tok.line, &tok.col);
    out_.push_back(std::move(tok));
  }

  size_t find_tag_start(size_t from) const {
    for (size_t i = src_.find('{', from); i != std::string::npos; i = src_.find('{', i + 1))
      if (i + 1 < src_.size() && (src_[i + 1] == '{' || src_[i + 1] == '%' || src_[i + 1] == '#')) return i;
    return std::string::npos;
  }

  size_t skip_space(size_t i) const {
    while (i < src_.size()) {
      size_t n = space_at(src_, i);
      if (!n) break;
      i += n;
    }
    return i;
  }

  // For `{%` at k: if it opens `{% raw %}`, the offset just past its end.
  size_t match_raw_begin(size_t k) const {
    size_t i = k + 2;
    if (i < src_.size() && (src_[i] == '-' || src_[i] == '+')) ++i;
    i = skip_space(i);
    if (src_.compare(i, 3, "raw") != 0) return std::string::npos;
    i = skip_space(i + 3);
    if (src_.compare(i, 3, "-%}") == 0) return skip_space(i + 3);
    if (src_.compare(i, 2, "%}") == 0) return i + 2;  // Jinja2 applies no trim_blocks after `raw %}`
    return std::string::npos;
  }

  void lex_raw_body(size_t raw_at) {
    for (size_t k = src_.find("{%", pos_); k != std::string::npos; k = src_.find("{%", k + 1)) {
      size_t i = k + 2;
      char sign = i < src_.size() && (src_[i] == '-' || src_[i] == '+') ? src_[i] : 0;
      if (sign) ++i;
      i = skip_space(i);
      if (src_.compare(i, 6, "endraw") != 0) continue;
      i = skip_space(i + 6);
      size_t end;
      if (src_.compare(i, 3, "+%}") == 0) {
        end = i + 3;
      } else if (src_.compare(i, 3, "-%}") == 0) {
        end = skip_space(i + 3);
      } else if (src_.compare(i, 2, "%}") == 0) {
        end = i + 2;
        if (end < src_.size() && src_[end] == '\n') ++end;
      } else {
        continue;
      }
      std::string body = src_.substr(pos_, k - pos_);
      if (sign == '-') {
        body = rstrip_space(body);
      } else if (sign != '+') {
        size_t l_pos = body.rfind('\n');
        l_pos = l_pos == std::string::npos ? 0 : l_pos + 1;
        if (l_pos > 0 && all_space(std::string_view(body).substr(l_pos))) body.resize(l_pos);
      }
      if (!body.empty()) push(Token::Type::Text, std::move(body), pos_);
      pos_ = end;
      return;
    }
    fail(raw_at, "missing end of raw directive");
  }

  void lex_comment(size_t start) {
    size_t j = src_.find("#}", pos_);
    if (j == std::string::npos) fail(start, "missing end of comment tag");
    char sign = j > pos_ && (src_[j - 1] == '-' || src_[j - 1] == '+') ? src_[j - 1] : 0;
    pos_ = j + 2;
    if (sign == '-') {
      pos_ = skip_space(pos_);
    } else if (sign != '+' && pos_ < src_.size() && src_[pos_] == '\n') {
      ++pos_;  // trim_blocks
    }
  }

  void lex_tag(bool block, size_t start) {
    push(block ? Token::Type::BlockBegin : Token::Type::VarBegin, "", start);
    int depth = 0;
    while (true) {
      if (pos_ >= src_.size()) fail(start, std::string("unexpected end of template, expected '") + (block ? "%}" : "}}") + "'");
      if (depth == 0 && try_end(block)) return;
      size_t n = space_at(src_, pos_);
      if (n) {
        pos_ += n;
        continue;
      }
      lex_token(&depth);
    }
  }

  bool try_end(bool block) {
    size_t at = pos_;
    if (block) {
      if (src_.compare(pos_, 3, "+%}") == 0) {
        pos_ += 3;
      } else if (src_.compare(pos_, 3, "-%}") == 0) {
        pos_ = skip_space(pos_ + 3);
      } else if (src_.compare(pos_, 2, "%}") == 0) {
        pos_ += 2;
        if (pos_ < src_.size() && src_[pos_] == '\n') ++pos_;  // trim_blocks
      } else {
        return false;
      }
      push(Token::Type::BlockEnd, "", at);
      return true;
    }
    if (src_.compare(pos_, 3, "-}}") == 0) {
      pos_ = skip_space(pos_ + 3);
    } else if (src_.compare(pos_, 2, "}}") == 0) {
      pos_ += 2;
    } else {
      return false;
    }
    push(Token::Type::VarEnd, "", at);
    return true;
  }

  static bool is_digit(char c) { return c >= '0' && c <= '9'; }
  static bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
  static bool is_name_char(char c) { return is_name_start(c) || is_digit(c); }

  size_t digits(size_t i) const {
    while (i < src_.size() && (is_digit(src_[i]) || (src_[i] == '_' && i + 1 < src_.size() && is_digit(src_[i + 1])))) ++i;
    return i;
  }

  void lex_token(int* depth) {
    size_t at = pos_;
    char c = src_[pos_];
    if (is_digit(c)) {
      size_t i = digits(pos_);
      bool is_float = false;
      bool after_dot = at > 0 && src_[at - 1] == '.';
      if (!after_dot && i + 1 < src_.size() && src_[i] == '.' && is_digit(src_[i + 1])) {
        i = digits(i + 1);
        is_float = true;
      }
      if (!after_dot && i < src_.size() && (src_[i] == 'e' || src_[i] == 'E')) {
        size_t j = i + 1;
        if (j < src_.size() && (src_[j] == '+' || src_[j] == '-')) ++j;
        if (j < src_.size() && is_digit(src_[j])) {
          i = digits(j);
          is_float = true;
        }
      }
      std::string num;
      for (size_t k = pos_; k < i; ++k)
        if (src_[k] != '_') num.push_back(src_[k]);
      pos_ = i;
      push(is_float ? Token::Type::Float : Token::Type::Int, num, at);
      return;
    }
    if (is_name_start(c)) {
      size_t i = pos_;
      while (i < src_.size() && is_name_char(src_[i])) ++i;
      push(Token::Type::Name, src_.substr(pos_, i - pos_), at);
      pos_ = i;
      return;
    }
    if (c == '\'' || c == '"') {
      push(Token::Type::String, lex_string(c), at);
      return;
    }
    static const char* const kOps[] = {"//", "**", "==", "!=", ">=", "<=", "+", "-", "/", "*", "%", "~", "[", "]",
                                       "(",  ")",  "{",  "}",  ">",  "<",  "=", ".", ":", "|", ",", ";"};
    for (const char* op : kOps) {
      size_t n = std::char_traits<char>::length(op);
      if (src_.compare(pos_, n, op) != 0) continue;
      if (n == 1 && (c == '(' || c == '[' || c == '{')) ++*depth;
      if (n == 1 && (c == ')' || c == ']' || c == '}')) {
        if (*depth == 0) fail(at, std::string("unexpected '") + c + "'");
        --*depth;
      }
      pos_ += n;
      push(Token::Type::Op, op, at);
      return;
    }
    fail(at, std::string("unexpected character '") + c + "'");
  }

  // Python string literal semantics (unicode-escape decoding).
  std::string lex_string(char quote) {
    size_t start = pos_;
    std::string out;
    ++pos_;
    while (true) {
      if (pos_ >= src_.size()) fail(start, "unterminated string literal");
      char c = src_[pos_++];
      if (c == quote) return out;
      if (c != '\\') {
        out.push_back(c);
        continue;
      }
      if (pos_ >= src_.size()) fail(start, "unterminated string literal");
      char e = src_[pos_++];
      switch (e) {
        case '\n': break;
        case '\\': out.push_back('\\'); break;
        case '\'': out.push_back('\''); break;
        case '"': out.push_back('"'); break;
        case 'a': out.push_back('\a'); break;
        case 'b': out.push_back('\b'); break;
        case 'f': out.push_back('\f'); break;
        case 'n': out.push_back('\n'); break;
        case 'r': out.push_back('\r'); break;
        case 't': out.push_back('\t'); break;
        case 'v': out.push_back('\v'); break;
        case 'x':
        case 'u':
        case 'U': {
          size_t n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
          if (pos_ + n > src_.size()) fail(start, std::string("truncated \\") + e + " escape in string literal");
          char32_t cp = 0;
          for (size_t k = 0; k < n; ++k) {
            char h = src_[pos_ + k];
            int v = is_digit(h) ? h - '0' : (h >= 'a' && h <= 'f') ? h - 'a' + 10 : (h >= 'A' && h <= 'F') ? h - 'A' + 10 : -1;
            if (v < 0) fail(start, std::string("truncated \\") + e + " escape in string literal");
            cp = cp * 16 + static_cast<char32_t>(v);
          }
          if (cp > 0x10FFFF) fail(start, "invalid \\U escape in string literal");
          pos_ += n;
          py::append_utf8(out, cp);
          break;
        }
        default:
          if (e >= '0' && e <= '7') {
            char32_t cp = static_cast<char32_t>(e - '0');
            for (int k = 0; k < 2 && pos_ < src_.size() && src_[pos_] >= '0' && src_[pos_] <= '7'; ++k)
              cp = cp * 8 + static_cast<char32_t>(src_[pos_++] - '0');
            py::append_utf8(out, cp);
          } else {
            out.push_back('\\');  // Python keeps unknown escapes verbatim
            out.push_back(e);
          }
      }
    }
  }

  std::string src_;
  std::vector<size_t> line_starts_;
  size_t pos_ = 0;
  std::vector<Token> out_;
};

}  // namespace

std::vector<Token> tokenize(const std::string& source) { return Lexer(source).run(); }

}  // namespace reprox::tmpl
