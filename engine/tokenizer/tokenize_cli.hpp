// `reprox tokenize`: one JSON string per input line -> one JSON array of ids
// per output line.
#pragma once

#include <iosfwd>
#include <string>

namespace reprox::tok {

// Returns the process exit code: 0 on success; 1 (after a message on stderr)
// if the model cannot be loaded or a line is not a JSON string.
int run_tokenize_cli(const std::string& model_dir, bool parse_special, std::istream& in, std::ostream& out);

}  // namespace reprox::tok
