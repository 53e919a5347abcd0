// Debug tool: renders a template file with a JSON context file.
// Usage: template_render_cli TEMPLATE CONTEXT.json
// Prints the output to stdout; on error prints "ERROR[raised]: msg" or
// "ERROR: msg" to stdout and exits 2 (compile errors exit 3).
#include <fstream>
#include <iostream>
#include <sstream>

#include "engine/template/chat_template.hpp"

namespace {
std::string slurp(const char* path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: " << argv[0] << " TEMPLATE CONTEXT.json\n";
    return 1;
  }
  std::shared_ptr<const reprox::tmpl::ChatTemplate> t;
  try {
    t = reprox::tmpl::ChatTemplate::compile(slurp(argv[1]));
  } catch (const std::exception& e) {
    std::cout << "COMPILE ERROR: " << e.what();
    return 3;
  }
  reprox::json::Value ctx;
  if (auto err = reprox::json::parse(slurp(argv[2]), ctx)) {
    std::cerr << "bad context: " << err.message << "\n";
    return 1;
  }
  auto r = t->render(ctx);
  if (auto* e = std::get_if<reprox::tmpl::RenderError>(&r)) {
    std::cout << (e->raised_by_template ? "ERROR[raised]: " : "ERROR: ") << e->message;
    return 2;
  }
  std::cout << std::get<std::string>(r);
  return 0;
}
