// Builds the syntax tree from tokens, following Jinja2's grammar and
// operator precedence. Refuses (throws std::runtime_error naming the line,
// column and construct) any tag, filter, test, method or function the
// evaluator does not implement, so unsupported templates fail at load.
#pragma once

#include <string>

#include "engine/template/ast.hpp"

namespace reprox::tmpl {

Body parse_template(const std::string& source);

}  // namespace reprox::tmpl
