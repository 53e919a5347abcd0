// Bounds on one render of a chat template, so that a hostile or broken
// template (nested loops, huge repetitions, strings doubled in a loop, deep
// recursion) ends with a RenderError naming the bound instead of running
// for a long time or exhausting memory. The defaults are far above what
// real chat templates need for a full context window.
#pragma once

#include <cstddef>
#include <cstdint>

namespace reprox::tmpl {

struct RenderLimits {
  // Evaluation steps. Each statement, expression and loop iteration costs
  // one step; an operator, filter, call, subscript or comparison costs one
  // more per element of the lists and dicts, and per 64 bytes of the
  // strings, it reads or builds.
  uint64_t max_steps = 10'000'000;
  // Bytes of the rendered output, and of any one string the template builds
  // (captured blocks and macro output included).
  size_t max_bytes = size_t{16} << 20;
  // Elements of any one list, tuple or dict the template builds.
  size_t max_items = size_t{1} << 20;
};

// Containers nested in one value the template builds (JSON context values
// nest at most 64 deep, see json::parse).
inline constexpr uint32_t kMaxValueNesting = 256;
// Expressions and statements being evaluated inside one another, macro
// calls included.
inline constexpr int kMaxEvalNesting = 1024;

}  // namespace reprox::tmpl
