// The parser behind parse_template (parser.hpp): a cursor over the lexer's
// tokens and one method per grammar rule. Statements are parsed in
// parser.cpp, expressions in parser_expressions.cpp. Internal to the
// template module.
#pragma once

#include <algorithm>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "engine/template/ast.hpp"
#include "engine/template/lexer.hpp"

namespace reprox::tmpl::parsing {

using T = Token::Type;

// Depth of the syntax tree: nested or chained constructs (parentheses,
// operands of chained operators, attribute chains, filters, tags inside
// tags). Parsing, rendering and freeing the tree recurse along it.
constexpr int kMaxSyntaxDepth = 256;

class Parser {
 public:
  explicit Parser(std::vector<Token> toks) : toks_(std::move(toks)) {}

  Body run();

 private:
  const Token& cur() const { return toks_[pos_]; }
  const Token& peek(size_t n = 1) const { return toks_[std::min(pos_ + n, toks_.size() - 1)]; }
  void next() {
    if (pos_ + 1 < toks_.size()) ++pos_;
  }
  bool is_op(const char* op) const { return cur().type == T::Op && cur().text == op; }
  bool is_name(const char* n) const { return cur().type == T::Name && cur().text == n; }
  bool skip_op(const char* op) {
    if (!is_op(op)) return false;
    next();
    return true;
  }
  bool skip_name(const char* n) {
    if (!is_name(n)) return false;
    next();
    return true;
  }
  [[noreturn]] void fail(const Token& t, const std::string& what) const {
    throw std::runtime_error("line " + std::to_string(t.line) + ", column " + std::to_string(t.col) + ": " + what);
  }
  static std::string describe(const Token& t) {
    switch (t.type) {
      case T::Eof: return "end of template";
      case T::BlockEnd: return "'%}'";
      case T::VarEnd: return "'}}'";
      case T::Text: return "template text";
      case T::String: return "string literal";
      default: return "'" + t.text + "'";
    }
  }
  void expect_op(const char* op) {
    if (!skip_op(op)) fail(cur(), std::string("expected '") + op + "', got " + describe(cur()));
  }
  std::string expect_name() {
    if (cur().type != T::Name) fail(cur(), "expected a name, got " + describe(cur()));
    std::string n = cur().text;
    next();
    return n;
  }
  void expect_block_end() {
    if (cur().type != T::BlockEnd) fail(cur(), "expected '%}', got " + describe(cur()));
    next();
  }

  // One level deeper until the scope ends; fails past kMaxSyntaxDepth.
  class Deeper {
   public:
    explicit Deeper(Parser& p) : p_(p), saved_(p.depth_) { p.deepen(); }
    ~Deeper() { p_.depth_ = saved_; }
    Deeper(const Deeper&) = delete;
    Deeper& operator=(const Deeper&) = delete;

   private:
    Parser& p_;
    int saved_;
  };
  // One level deeper for the rest of the enclosing Deeper's scope (a chain
  // such as a + b + c nests to the left, one level per link).
  void deepen() {
    if (++depth_ > kMaxSyntaxDepth)
      fail(cur(), "template nested too deeply (more than " + std::to_string(kMaxSyntaxDepth) + " levels)");
  }

  // Number tokens as values; out of range is a syntax error.
  int64_t int_literal(const Token& t) const {
    try {
      return static_cast<int64_t>(std::stoll(t.text));
    } catch (const std::exception&) {
      fail(t, "number literal out of range: " + t.text);
    }
  }
  double float_literal(const Token& t) const {
    try {
      return std::stod(t.text);
    } catch (const std::exception&) {
      fail(t, "number literal out of range: " + t.text);
    }
  }

  ExprPtr make(Expr::Kind k, const Token& at) {
    auto e = std::make_unique<Expr>();
    e->kind = k;
    e->line = at.line;
    e->col = at.col;
    return e;
  }
  std::unique_ptr<Stmt> make_stmt(Stmt::Kind k, const Token& at) {
    auto s = std::make_unique<Stmt>();
    s->kind = k;
    s->line = at.line;
    s->col = at.col;
    return s;
  }

  // ---- statements ----

  // Parses until one of `ends` opens a block tag; leaves the cursor on that
  // tag's name and stores it in *end ("" at end of template).
  Body parse_body(const std::set<std::string>& ends, std::string* end);
  static std::string join_names(const std::set<std::string>& names);
  // Consumes the tag name `end` (already current) and the closing '%}'.
  void close_tag();
  std::unique_ptr<Stmt> parse_statement();
  std::unique_ptr<Stmt> parse_for();
  std::vector<std::string> parse_assign_names(const Token& at);
  std::unique_ptr<Stmt> parse_if();
  std::unique_ptr<Stmt> parse_set();
  std::unique_ptr<Stmt> parse_macro();

  // ---- expressions (Jinja2 precedence) ----

  ExprPtr parse_tuple(bool with_condexpr, bool explicit_parens);
  bool tuple_ends() const;
  ExprPtr parse_expression(bool with_condexpr);
  ExprPtr binary(Expr::Kind k, const Token& at, ExprPtr l, ExprPtr r, std::string op = "");
  ExprPtr parse_or();
  ExprPtr parse_and();
  ExprPtr parse_not();
  ExprPtr parse_compare();
  ExprPtr parse_math1();
  ExprPtr parse_concat();
  ExprPtr parse_math2();
  ExprPtr parse_pow();
  ExprPtr parse_unary(bool with_filter);
  ExprPtr parse_primary();
  ExprPtr parse_postfix(ExprPtr e);
  ExprPtr parse_subscript(ExprPtr obj, const Token& at);
  void parse_call_args(Expr& e);
  ExprPtr parse_call(ExprPtr callee);
  ExprPtr parse_filter(ExprPtr operand);
  ExprPtr parse_filter_expr(ExprPtr e);

  std::vector<Token> toks_;
  size_t pos_ = 0;
  int loop_depth_ = 0;
  int depth_ = 0;  // see Deeper
  std::set<std::string> macro_names_;
  std::vector<std::pair<std::string, Token>> called_names_;
};

}  // namespace reprox::tmpl::parsing
