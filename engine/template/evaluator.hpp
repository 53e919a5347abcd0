// Renders a parsed template. One Evaluator per render call; it owns the
// variable frames and the output buffer and borrows the (shared, immutable)
// syntax tree. Never throws: the first error stops rendering and is left in
// the Fault. A render that goes past `limits` (render_limits.hpp) fails.
#pragma once

#include <string>

#include "engine/template/ast.hpp"
#include "engine/template/builtins.hpp"
#include "engine/template/render_limits.hpp"

namespace reprox::tmpl {

// Renders `root` with `context` (a dict of top-level variables) into out.
// Returns false with fault set on error.
bool evaluate(const Body& root, const Value& context, const RenderLimits& limits, std::string& out, Fault& fault);

}  // namespace reprox::tmpl
