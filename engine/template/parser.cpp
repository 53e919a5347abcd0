#include "engine/template/parser.hpp"

#include <set>
#include <stdexcept>

#include "engine/template/builtins.hpp"
#include "engine/template/lexer.hpp"

namespace reprox::tmpl {
namespace {

using T = Token::Type;

// Depth of the syntax tree: nested or chained constructs (parentheses,
// operands of chained operators, attribute chains, filters, tags inside
// tags). Parsing, rendering and freeing the tree recurse along it.
constexpr int kMaxSyntaxDepth = 256;

class Parser {
 public:
  explicit Parser(std::vector<Token> toks) : toks_(std::move(toks)) {}

  Body run() {
    std::string end;
    Body body = parse_body({}, &end);
    for (const auto& [name, tok] : called_names_)
      if (!macro_names_.count(name) && !is_global_function(name))
        fail(tok, "unsupported function '" + name + "' (not a macro of this template or a known global)");
    return body;
  }

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
  Body parse_body(const std::set<std::string>& ends, std::string* end) {
    Body body;
    while (true) {
      const Token& t = cur();
      if (t.type == T::Eof) {
        if (!ends.empty()) fail(t, "unexpected end of template, expected " + join_names(ends));
        *end = "";
        return body;
      }
      if (t.type == T::Text) {
        auto s = make_stmt(Stmt::Kind::Text, t);
        s->text = t.text;
        body.push_back(std::move(s));
        next();
      } else if (t.type == T::VarBegin) {
        next();
        auto s = make_stmt(Stmt::Kind::Print, t);
        s->expr = parse_tuple(true, false);
        if (cur().type != T::VarEnd) fail(cur(), "expected '}}', got " + describe(cur()));
        next();
        body.push_back(std::move(s));
      } else if (t.type == T::BlockBegin) {
        next();
        if (cur().type != T::Name) fail(cur(), "expected a tag name, got " + describe(cur()));
        if (ends.count(cur().text)) {
          *end = cur().text;
          return body;
        }
        body.push_back(parse_statement());
      } else {
        fail(t, "unexpected " + describe(t));
      }
    }
  }

  static std::string join_names(const std::set<std::string>& names) {
    std::string s;
    for (const auto& n : names) s += (s.empty() ? "'" : " or '") + n + "'";
    return s;
  }

  // Consumes the tag name `end` (already current) and the closing '%}'.
  void close_tag() {
    next();
    expect_block_end();
  }

  std::unique_ptr<Stmt> parse_statement() {
    Deeper deeper(*this);
    const Token& t = cur();
    const std::string& tag = t.text;
    if (tag == "for") return parse_for();
    if (tag == "if") return parse_if();
    if (tag == "set") return parse_set();
    if (tag == "macro") return parse_macro();
    if (tag == "break" || tag == "continue") {
      if (loop_depth_ == 0) fail(t, "'" + tag + "' outside a for loop");
      auto s = make_stmt(tag == "break" ? Stmt::Kind::Break : Stmt::Kind::Continue, t);
      next();
      expect_block_end();
      return s;
    }
    if (tag == "generation") {
      auto s = make_stmt(Stmt::Kind::Scope, t);
      next();
      expect_block_end();
      std::string end;
      s->body = parse_body({"endgeneration"}, &end);
      close_tag();
      return s;
    }
    fail(t, "unsupported tag '" + tag + "'");
  }

  std::unique_ptr<Stmt> parse_for() {
    auto s = make_stmt(Stmt::Kind::For, cur());
    next();
    s->targets = parse_assign_names(cur());
    if (!skip_name("in")) fail(cur(), "expected 'in', got " + describe(cur()));
    s->expr = parse_tuple(false, false);
    if (skip_name("if")) s->cond = parse_expression(true);
    if (is_name("recursive")) fail(cur(), "unsupported construct: recursive for loop");
    expect_block_end();
    ++loop_depth_;
    std::string end;
    s->body = parse_body({"endfor", "else"}, &end);
    --loop_depth_;
    if (end == "else") {
      close_tag();
      s->else_body = parse_body({"endfor"}, &end);
    }
    close_tag();
    return s;
  }

  std::vector<std::string> parse_assign_names(const Token& at) {
    std::vector<std::string> names;
    bool paren = skip_op("(");
    do {
      if (cur().type != T::Name) fail(at, "unsupported assignment target " + describe(cur()));
      names.push_back(expect_name());
    } while (skip_op(","));
    if (paren) expect_op(")");
    for (const auto& n : names)
      if (n == "true" || n == "false" || n == "none" || n == "True" || n == "False" || n == "None")
        fail(at, "cannot assign to '" + n + "'");
    return names;
  }

  std::unique_ptr<Stmt> parse_if() {
    auto s = make_stmt(Stmt::Kind::If, cur());
    next();
    while (true) {
      ExprPtr cond = parse_tuple(false, false);
      expect_block_end();
      std::string end;
      Body body = parse_body({"elif", "else", "endif"}, &end);
      s->branches.emplace_back(std::move(cond), std::move(body));
      if (end == "elif") {
        next();
        continue;
      }
      if (end == "else") {
        close_tag();
        s->else_body = parse_body({"endif"}, &end);
      }
      close_tag();
      return s;
    }
  }

  std::unique_ptr<Stmt> parse_set() {
    const Token& at = cur();
    next();
    if (cur().type == T::Name && peek().type == T::Op && peek().text == ".") {
      auto s = make_stmt(Stmt::Kind::Set, at);
      s->targets.push_back(expect_name());
      next();
      s->attr = expect_name();
      expect_op("=");
      s->expr = parse_tuple(true, false);
      expect_block_end();
      return s;
    }
    std::vector<std::string> names = parse_assign_names(at);
    if (skip_op("=")) {
      auto s = make_stmt(Stmt::Kind::Set, at);
      s->targets = std::move(names);
      s->expr = parse_tuple(true, false);
      expect_block_end();
      return s;
    }
    if (names.size() != 1) fail(at, "a block set assigns exactly one name");
    auto s = make_stmt(Stmt::Kind::SetBlock, at);
    s->targets = std::move(names);
    while (skip_op("|")) s->filters.push_back(parse_filter(nullptr));
    expect_block_end();
    std::string end;
    s->body = parse_body({"endset"}, &end);
    close_tag();
    return s;
  }

  std::unique_ptr<Stmt> parse_macro() {
    auto s = make_stmt(Stmt::Kind::Macro, cur());
    next();
    auto m = std::make_unique<MacroDef>();
    m->name = expect_name();
    expect_op("(");
    while (!is_op(")")) {
      if (!m->params.empty()) expect_op(",");
      if (is_op(")")) break;
      m->params.push_back(expect_name());
      if (skip_op("=")) {
        m->defaults.push_back(parse_expression(true));
      } else {
        if (!m->defaults.empty() && m->defaults.back()) fail(cur(), "non-default macro argument follows default argument");
        m->defaults.push_back(nullptr);
      }
    }
    next();
    expect_block_end();
    macro_names_.insert(m->name);
    int saved_depth = loop_depth_;
    loop_depth_ = 0;
    std::string end;
    m->body = parse_body({"endmacro"}, &end);
    loop_depth_ = saved_depth;
    close_tag();
    s->macro = std::move(m);
    return s;
  }

  // ---- expressions (Jinja2 precedence) ----

  ExprPtr parse_tuple(bool with_condexpr, bool explicit_parens) {
    const Token& at = cur();
    std::vector<ExprPtr> items;
    bool saw_comma = false;
    while (true) {
      if (!items.empty()) {
        if (!skip_op(",")) break;
        saw_comma = true;
      }
      if (tuple_ends()) break;
      items.push_back(parse_expression(with_condexpr));
    }
    if (!saw_comma) {
      if (!items.empty()) return std::move(items[0]);
      if (!explicit_parens) fail(cur(), "expected an expression, got " + describe(cur()));
    }
    auto e = make(Expr::Kind::TupleLit, at);
    e->args = std::move(items);
    return e;
  }

  bool tuple_ends() const {
    const Token& t = cur();
    if (t.type == T::VarEnd || t.type == T::BlockEnd || t.type == T::Eof) return true;
    if (t.type == T::Op && (t.text == ")" || t.text == "]" || t.text == "}")) return true;
    return t.type == T::Name && (t.text == "if" || t.text == "recursive" || t.text == "in");
  }

  ExprPtr parse_expression(bool with_condexpr) {
    Deeper deeper(*this);
    if (!with_condexpr) return parse_or();
    ExprPtr e = parse_or();
    while (is_name("if")) {
      const Token& at = cur();
      deepen();
      next();
      auto c = make(Expr::Kind::Cond, at);
      c->a = std::move(e);
      c->b = parse_or();
      if (skip_name("else")) c->c = parse_expression(true);
      e = std::move(c);
    }
    return e;
  }

  ExprPtr binary(Expr::Kind k, const Token& at, ExprPtr l, ExprPtr r, std::string op = "") {
    auto e = make(k, at);
    e->a = std::move(l);
    e->b = std::move(r);
    e->name = std::move(op);
    return e;
  }

  ExprPtr parse_or() {
    ExprPtr l = parse_and();
    while (is_name("or")) {
      const Token& at = cur();
      deepen();
      next();
      l = binary(Expr::Kind::Or, at, std::move(l), parse_and());
    }
    return l;
  }

  ExprPtr parse_and() {
    ExprPtr l = parse_not();
    while (is_name("and")) {
      const Token& at = cur();
      deepen();
      next();
      l = binary(Expr::Kind::And, at, std::move(l), parse_not());
    }
    return l;
  }

  ExprPtr parse_not() {
    Deeper deeper(*this);
    if (is_name("not")) {
      const Token& at = cur();
      next();
      auto e = make(Expr::Kind::Not, at);
      e->a = parse_not();
      return e;
    }
    return parse_compare();
  }

  ExprPtr parse_compare() {
    const Token& at = cur();
    ExprPtr first = parse_math1();
    auto e = make(Expr::Kind::Compare, at);
    while (true) {
      const Token& t = cur();
      if (t.type == T::Op && (t.text == "==" || t.text == "!=" || t.text == "<" || t.text == ">" || t.text == "<=" ||
                              t.text == ">=")) {
        e->ops.push_back(t.text);
        next();
      } else if (is_name("in")) {
        e->ops.push_back("in");
        next();
      } else if (is_name("not") && peek().type == T::Name && peek().text == "in") {
        e->ops.push_back("not in");
        next();
        next();
      } else {
        break;
      }
      deepen();
      e->args.push_back(parse_math1());
    }
    if (e->ops.empty()) return first;
    e->a = std::move(first);
    return e;
  }

  ExprPtr parse_math1() {
    ExprPtr l = parse_concat();
    while (is_op("+") || is_op("-")) {
      const Token& at = cur();
      deepen();
      std::string op = at.text;
      next();
      l = binary(Expr::Kind::Binary, at, std::move(l), parse_concat(), op);
    }
    return l;
  }

  ExprPtr parse_concat() {
    ExprPtr l = parse_math2();
    while (is_op("~")) {
      const Token& at = cur();
      deepen();
      next();
      l = binary(Expr::Kind::Binary, at, std::move(l), parse_math2(), "~");
    }
    return l;
  }

  ExprPtr parse_math2() {
    ExprPtr l = parse_pow();
    while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
      const Token& at = cur();
      deepen();
      std::string op = at.text;
      next();
      l = binary(Expr::Kind::Binary, at, std::move(l), parse_pow(), op);
    }
    return l;
  }

  ExprPtr parse_pow() {
    ExprPtr l = parse_unary(true);
    while (is_op("**")) {
      const Token& at = cur();
      deepen();
      next();
      l = binary(Expr::Kind::Binary, at, std::move(l), parse_unary(true), "**");
    }
    return l;
  }

  ExprPtr parse_unary(bool with_filter) {
    Deeper deeper(*this);
    const Token& at = cur();
    ExprPtr e;
    if (is_op("-") || is_op("+")) {
      bool neg = is_op("-");
      next();
      e = make(neg ? Expr::Kind::Neg : Expr::Kind::Pos, at);
      e->a = parse_unary(false);
    } else {
      e = parse_postfix(parse_primary());
    }
    if (with_filter) e = parse_filter_expr(std::move(e));
    return e;
  }

  ExprPtr parse_primary() {
    const Token& t = cur();
    if (t.type == T::Name) {
      next();
      auto e = make(Expr::Kind::Literal, t);
      if (t.text == "true" || t.text == "True") {
        e->literal = Value(true);
      } else if (t.text == "false" || t.text == "False") {
        e->literal = Value(false);
      } else if (t.text == "none" || t.text == "None") {
        e->literal = Value::none();
      } else {
        e->kind = Expr::Kind::Name;
        e->name = t.text;
      }
      return e;
    }
    if (t.type == T::String) {
      std::string s;
      while (cur().type == T::String) {
        s += cur().text;
        next();
      }
      auto e = make(Expr::Kind::Literal, t);
      e->literal = Value(std::move(s));
      return e;
    }
    if (t.type == T::Int || t.type == T::Float) {
      next();
      auto e = make(Expr::Kind::Literal, t);
      e->literal = t.type == T::Int ? Value(int_literal(t)) : Value(float_literal(t));
      return e;
    }
    if (skip_op("(")) {
      ExprPtr e = parse_tuple(true, true);
      expect_op(")");
      return e;
    }
    if (skip_op("[")) {
      auto e = make(Expr::Kind::ListLit, t);
      while (!is_op("]")) {
        if (!e->args.empty()) expect_op(",");
        if (is_op("]")) break;
        e->args.push_back(parse_expression(true));
      }
      next();
      return e;
    }
    if (skip_op("{")) {
      auto e = make(Expr::Kind::DictLit, t);
      while (!is_op("}")) {
        if (!e->args.empty()) expect_op(",");
        if (is_op("}")) break;
        e->args.push_back(parse_expression(true));
        expect_op(":");
        e->args.push_back(parse_expression(true));
      }
      next();
      return e;
    }
    fail(t, "unexpected " + describe(t));
  }

  ExprPtr parse_postfix(ExprPtr e) {
    while (true) {
      const Token& at = cur();
      deepen();
      if (skip_op(".")) {
        if (cur().type == T::Name) {
          auto a = make(Expr::Kind::Attr, at);
          a->a = std::move(e);
          a->name = expect_name();
          e = std::move(a);
        } else if (cur().type == T::Int) {
          auto a = make(Expr::Kind::Item, at);
          a->a = std::move(e);
          a->b = make(Expr::Kind::Literal, cur());
          a->b->literal = Value(int_literal(cur()));
          next();
          e = std::move(a);
        } else {
          fail(cur(), "expected an attribute name after '.', got " + describe(cur()));
        }
      } else if (skip_op("[")) {
        e = parse_subscript(std::move(e), at);
      } else if (is_op("(")) {
        e = parse_call(std::move(e));
      } else {
        return e;
      }
    }
  }

  ExprPtr parse_subscript(ExprPtr obj, const Token& at) {
    std::vector<ExprPtr> parts(3);
    bool is_slice = false;
    if (!is_op(":")) parts[0] = parse_expression(true);
    if (skip_op(":")) {
      is_slice = true;
      if (!is_op("]") && !is_op(":")) parts[1] = parse_expression(true);
      if (skip_op(":") && !is_op("]")) parts[2] = parse_expression(true);
    } else if (is_op(",")) {
      fail(cur(), "unsupported construct: tuple subscript");
    }
    expect_op("]");
    if (!is_slice) {
      auto e = make(Expr::Kind::Item, at);
      e->a = std::move(obj);
      e->b = std::move(parts[0]);
      return e;
    }
    auto e = make(Expr::Kind::Slice, at);
    e->a = std::move(obj);
    e->args = std::move(parts);
    return e;
  }

  void parse_call_args(Expr& e) {
    expect_op("(");
    while (!is_op(")")) {
      if (!e.args.empty() || !e.kwargs.empty()) expect_op(",");
      if (is_op(")")) break;
      if (is_op("*") || is_op("**")) fail(cur(), "unsupported construct: *args/**kwargs in a call");
      if (cur().type == T::Name && peek().type == T::Op && peek().text == "=") {
        std::string key = expect_name();
        next();
        e.kwargs.emplace_back(key, parse_expression(true));
      } else {
        if (!e.kwargs.empty()) fail(cur(), "positional argument follows keyword argument");
        e.args.push_back(parse_expression(true));
      }
    }
    next();
  }

  ExprPtr parse_call(ExprPtr callee) {
    const Token& at = cur();
    if (callee->kind == Expr::Kind::Name) {
      called_names_.emplace_back(callee->name, at);
    } else if (callee->kind == Expr::Kind::Attr) {
      if (!is_known_method(callee->name)) fail(at, "unsupported method '." + callee->name + "()'");
    } else {
      fail(at, "unsupported construct: call of a computed value");
    }
    auto e = make(Expr::Kind::Call, at);
    e->a = std::move(callee);
    parse_call_args(*e);
    return e;
  }

  ExprPtr parse_filter(ExprPtr operand) {
    const Token& at = cur();
    std::string name = expect_name();
    while (is_op(".")) {
      next();
      name += "." + expect_name();
    }
    auto e = make(Expr::Kind::Filter, at);
    e->builtin = find_filter(name);
    if (e->builtin < 0) fail(at, "unsupported filter '" + name + "' (supported: " + supported_filters() + ")");
    e->name = name;
    e->a = std::move(operand);
    if (is_op("(")) parse_call_args(*e);
    return e;
  }

  ExprPtr parse_filter_expr(ExprPtr e) {
    while (true) {
      deepen();
      if (skip_op("|")) {
        e = parse_filter(std::move(e));
      } else if (is_name("is")) {
        next();
        const Token& at = cur();
        auto t = make(Expr::Kind::Test, at);
        t->negated = skip_name("not");
        std::string name = expect_name();
        while (is_op(".")) {
          next();
          name += "." + expect_name();
        }
        t->builtin = find_test(name);
        if (t->builtin < 0) fail(at, "unsupported test '" + name + "' (supported: " + supported_tests() + ")");
        t->name = name;
        t->a = std::move(e);
        const Token& n = cur();
        if (is_op("(")) {
          parse_call_args(*t);
        } else if ((n.type == T::Name && n.text != "else" && n.text != "or" && n.text != "and") || n.type == T::String ||
                   n.type == T::Int || n.type == T::Float || is_op("[") || is_op("{")) {
          if (n.type == T::Name && (n.text == "is" || n.text == "in" || n.text == "if" || n.text == "not")) return t;
          t->args.push_back(parse_postfix(parse_primary()));
        }
        e = std::move(t);
      } else if (is_op("(")) {
        e = parse_call(std::move(e));
      } else {
        return e;
      }
    }
  }

  std::vector<Token> toks_;
  size_t pos_ = 0;
  int loop_depth_ = 0;
  int depth_ = 0;  // see Deeper
  std::set<std::string> macro_names_;
  std::vector<std::pair<std::string, Token>> called_names_;
};

}  // namespace

Body parse_template(const std::string& source) { return Parser(tokenize(source)).run(); }

}  // namespace reprox::tmpl
