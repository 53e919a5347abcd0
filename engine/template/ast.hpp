// The syntax tree a compiled template keeps; evaluated by evaluator.cpp.
// Nodes are immutable after parsing, so one tree serves concurrent renders.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/template/value.hpp"

namespace reprox::tmpl {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  enum class Kind {
    Literal,   // literal
    Name,      // name
    Attr,      // a.name
    Item,      // a[b]
    Slice,     // a[args[0]:args[1]:args[2]] (missing parts are null)
    Call,      // a(args, kwargs)
    Filter,    // a | name(args, kwargs); builtin = filter id
    Test,      // a is [not] name(args); builtin = test id, negated
    Neg,       // -a
    Pos,       // +a
    Not,       // not a
    Binary,    // a op b, op in name: + - * / // % ** ~
    Compare,   // a ops[0] args[0] ops[1] args[1] ... (chained)
    And,       // a and b
    Or,        // a or b
    Cond,      // a if b else c (c may be null)
    ListLit,   // [args]
    TupleLit,  // (args)
    DictLit,   // {args[0]: args[1], ...}
  };
  Kind kind;
  int line = 0;
  int col = 0;
  Value literal;
  std::string name;
  ExprPtr a, b, c;
  std::vector<ExprPtr> args;
  std::vector<std::pair<std::string, ExprPtr>> kwargs;
  std::vector<std::string> ops;
  int builtin = -1;
  bool negated = false;
};

struct Stmt;
using Body = std::vector<std::unique_ptr<Stmt>>;

struct MacroDef {
  std::string name;
  std::vector<std::string> params;
  std::vector<ExprPtr> defaults;  // one per param; null when required
  Body body;
};

struct Stmt {
  enum class Kind {
    Text,      // text
    Print,     // {{ expr }}
    If,        // branches (cond, body)...; else_body
    For,       // for targets in expr [if cond]: body; else_body
    Set,       // set targets = expr | set targets[0].attr = expr
    SetBlock,  // set targets[0]: body, then filters (Filter exprs with null operand)
    Macro,     // macro
    Break,
    Continue,
    Scope,     // body rendered in place ({% generation %})
  };
  Kind kind;
  int line = 0;
  int col = 0;
  std::string text;
  ExprPtr expr;
  ExprPtr cond;
  std::vector<std::pair<ExprPtr, Body>> branches;
  Body body;
  Body else_body;
  std::vector<std::string> targets;
  std::string attr;
  std::vector<ExprPtr> filters;
  std::unique_ptr<MacroDef> macro;
};

}  // namespace reprox::tmpl
