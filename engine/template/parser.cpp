#include "engine/template/parser.hpp"

#include "engine/template/builtins.hpp"
#include "engine/template/lexer.hpp"
#include "engine/template/parser_internal.hpp"

namespace reprox::tmpl {
namespace parsing {

Body Parser::run() {
  std::string end;
  Body body = parse_body({}, &end);
  for (const auto& [name, tok] : called_names_)
    if (!macro_names_.count(name) && !is_global_function(name))
      fail(tok, "unsupported function '" + name + "' (not a macro of this template or a known global)");
  return body;
}

Body Parser::parse_body(const std::set<std::string>& ends, std::string* end) {
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

std::string Parser::join_names(const std::set<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "'" : " or '") + n + "'";
  return s;
}

void Parser::close_tag() {
  next();
  expect_block_end();
}

std::unique_ptr<Stmt> Parser::parse_statement() {
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

std::unique_ptr<Stmt> Parser::parse_for() {
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

std::vector<std::string> Parser::parse_assign_names(const Token& at) {
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

std::unique_ptr<Stmt> Parser::parse_if() {
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

std::unique_ptr<Stmt> Parser::parse_set() {
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

std::unique_ptr<Stmt> Parser::parse_macro() {
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

}  // namespace parsing

Body parse_template(const std::string& source) { return parsing::Parser(tokenize(source)).run(); }

}  // namespace reprox::tmpl
