#include "engine/tokenizer/tokenize_cli.hpp"

#include <simdjson.h>

#include <iostream>
#include <stdexcept>

#include "engine/tokenizer/tokenizer.hpp"

namespace reprox::tok {

int run_tokenize_cli(const std::string& model_dir, bool parse_special, std::istream& in, std::ostream& out) {
  std::shared_ptr<const Tokenizer> tok;
  try {
    tok = Tokenizer::load_dir(model_dir);
  } catch (const std::exception& e) {
    std::cerr << "reprox tokenize: " << e.what() << "\n";
    return 1;
  }
  simdjson::dom::parser parser;
  std::string line;
  size_t line_no = 0;
  std::string buf;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    auto doc = parser.parse(simdjson::padded_string(line));
    std::string_view text;
    if (doc.error() || doc.value().get_string().get(text) != simdjson::SUCCESS) {
      std::cerr << "reprox tokenize: line " << line_no << " is not a JSON string\n";
      return 1;
    }
    const auto ids = tok->encode(text, parse_special);
    buf.clear();
    buf.push_back('[');
    for (size_t i = 0; i < ids.size(); ++i) {
      if (i) buf.push_back(',');
      buf += std::to_string(ids[i]);
    }
    buf += "]\n";
    out << buf;
  }
  out.flush();
  return 0;
}

}  // namespace reprox::tok
