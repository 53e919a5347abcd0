// Expressions, by Jinja2's precedence (lowest first), for parser_internal.hpp.
#include "engine/template/builtins.hpp"
#include "engine/template/parser_internal.hpp"

namespace reprox::tmpl::parsing {

ExprPtr Parser::parse_tuple(bool with_condexpr, bool explicit_parens) {
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

bool Parser::tuple_ends() const {
  const Token& t = cur();
  if (t.type == T::VarEnd || t.type == T::BlockEnd || t.type == T::Eof) return true;
  if (t.type == T::Op && (t.text == ")" || t.text == "]" || t.text == "}")) return true;
  return t.type == T::Name && (t.text == "if" || t.text == "recursive" || t.text == "in");
}

ExprPtr Parser::parse_expression(bool with_condexpr) {
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

ExprPtr Parser::binary(Expr::Kind k, const Token& at, ExprPtr l, ExprPtr r, std::string op) {
  auto e = make(k, at);
  e->a = std::move(l);
  e->b = std::move(r);
  e->name = std::move(op);
  return e;
}

ExprPtr Parser::parse_or() {
  ExprPtr l = parse_and();
  while (is_name("or")) {
    const Token& at = cur();
    deepen();
    next();
    l = binary(Expr::Kind::Or, at, std::move(l), parse_and());
  }
  return l;
}

ExprPtr Parser::parse_and() {
  ExprPtr l = parse_not();
  while (is_name("and")) {
    const Token& at = cur();
    deepen();
    next();
    l = binary(Expr::Kind::And, at, std::move(l), parse_not());
  }
  return l;
}

ExprPtr Parser::parse_not() {
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

ExprPtr Parser::parse_compare() {
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

ExprPtr Parser::parse_math1() {
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

ExprPtr Parser::parse_concat() {
  ExprPtr l = parse_math2();
  while (is_op("~")) {
    const Token& at = cur();
    deepen();
    next();
    l = binary(Expr::Kind::Binary, at, std::move(l), parse_math2(), "~");
  }
  return l;
}

ExprPtr Parser::parse_math2() {
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

ExprPtr Parser::parse_pow() {
  ExprPtr l = parse_unary(true);
  while (is_op("**")) {
    const Token& at = cur();
    deepen();
    next();
    l = binary(Expr::Kind::Binary, at, std::move(l), parse_unary(true), "**");
  }
  return l;
}

ExprPtr Parser::parse_unary(bool with_filter) {
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

ExprPtr Parser::parse_primary() {
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

ExprPtr Parser::parse_postfix(ExprPtr e) {
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

ExprPtr Parser::parse_subscript(ExprPtr obj, const Token& at) {
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

void Parser::parse_call_args(Expr& e) {
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

ExprPtr Parser::parse_call(ExprPtr callee) {
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

ExprPtr Parser::parse_filter(ExprPtr operand) {
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

ExprPtr Parser::parse_filter_expr(ExprPtr e) {
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

}  // namespace reprox::tmpl::parsing
