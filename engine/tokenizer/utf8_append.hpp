// Encodes one code point as UTF-8 (header-only: the tokenizer and the chat
// template interpreter share it without linking each other).
#pragma once

#include <string>

#include "common/utf8.hpp"

namespace reprox::tok {

// cp < 0x110000; surrogates are encoded as they are (callers decide about them).
inline void utf8_append(std::string& out, char32_t cp) { utf8::append(out, cp); }

}  // namespace reprox::tok
