// Renders a parsed template. One Evaluator per render call; it owns the
// variable frames and the output buffer and borrows the (shared, immutable)
// syntax tree. Never throws: the first error stops rendering and is left in
// the Fault.
#pragma once

#include <string>

#include "engine/template/ast.hpp"
#include "engine/template/builtins.hpp"

namespace reprox::tmpl {

// Renders `root` with `context` (a dict of top-level variables) into out.
// Returns false with fault set on error.
bool evaluate(const Body& root, const Value& context, std::string& out, Fault& fault);

}  // namespace reprox::tmpl
