# Embeds a text file into C++ as a raw string literal, at build time.
#   cmake -DINPUT=FILE -DOUTPUT=FILE.cpp -DSYMBOL=NAME [-DNAMESPACE=NS] -P embed_text.cmake
# defines `extern const char NAME[]` (the text, NUL-terminated) and
# `extern const size_t NAME##Size` (its length) in namespace NS (reprox).
# Run by an add_custom_command that depends on INPUT: an edit of the input
# regenerates and recompiles the output.
if(NOT INPUT OR NOT OUTPUT OR NOT SYMBOL)
  message(FATAL_ERROR "embed_text.cmake: INPUT, OUTPUT and SYMBOL are required")
endif()
if(NOT NAMESPACE)
  set(NAMESPACE reprox)
endif()
file(READ "${INPUT}" text)
set(delimiter "reprox_embed")
string(FIND "${text}" ")${delimiter}\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "embed_text.cmake: ${INPUT} contains the raw string delimiter )${delimiter}\"")
endif()
get_filename_component(input_name "${INPUT}" NAME)
set(content "// Generated from ${input_name} by cmake/embed_text.cmake; edit the source, not this file.
#include <cstddef>

namespace ${NAMESPACE} {

extern const char ${SYMBOL}[];
extern const std::size_t ${SYMBOL}Size;
const char ${SYMBOL}[] = R\"${delimiter}(${text})${delimiter}\";
const std::size_t ${SYMBOL}Size = sizeof(${SYMBOL}) - 1;

}  // namespace ${NAMESPACE}
")
file(WRITE "${OUTPUT}" "${content}")
