// Splits a template source into tokens the way Jinja2's lexer does with
// trim_blocks=True and lstrip_blocks=True (Hugging Face's settings):
// newlines normalized to "\n", one trailing newline dropped, `{%-`/`-%}`
// (and the `{{`/`{#` forms) strip whitespace, `+` disables lstrip/trim,
// comments vanish and `{% raw %}` bodies become plain text.
#pragma once

#include <string>
#include <vector>

namespace reprox::tmpl {

struct Token {
  enum class Type { Text, VarBegin, VarEnd, BlockBegin, BlockEnd, Name, String, Int, Float, Op, Eof };
  Type type;
  std::string text;  // Text: the output text; String: unescaped value; Op/Name/Int/Float: as written
  int line = 1;
  int col = 1;
};

// Throws std::runtime_error("line L, column C: ...") on malformed input.
std::vector<Token> tokenize(const std::string& source);

}  // namespace reprox::tmpl
