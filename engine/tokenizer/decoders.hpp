// HF decoders: ByteLevel, Replace, ByteFallback, Fuse, Strip, Metaspace,
// Sequence. Each step maps a list of token strings to a list of strings
// (HF's decode_chain); the final result is their concatenation.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/tokenizer/pattern.hpp"
#include "engine/tokenizer/pre_tokenizers.hpp"

namespace reprox::tok {

class Decoder {
 public:
  virtual ~Decoder() = default;
  // Const and thread-safe.
  virtual void decode_chain(std::vector<std::string>& tokens) const = 0;
  // As decode_chain, but bytes stay as the tokens spell them: invalid UTF-8
  // is not replaced with U+FFFD (ByteLevel, ByteFallback). For guided
  // decoding, which needs each token's exact bytes.
  virtual void decode_chain_raw(std::vector<std::string>& tokens) const { decode_chain(tokens); }
};

std::unique_ptr<Decoder> make_byte_level_decoder();
std::unique_ptr<Decoder> make_replace_decoder(Pattern pattern, std::string content);
std::unique_ptr<Decoder> make_byte_fallback_decoder();
std::unique_ptr<Decoder> make_fuse_decoder();
// Removes up to `start` leading and `stop` trailing copies of `content` (one char).
std::unique_ptr<Decoder> make_strip_decoder(std::string content, size_t start, size_t stop);
std::unique_ptr<Decoder> make_metaspace_decoder(std::string replacement, PrependScheme scheme);
std::unique_ptr<Decoder> make_sequence_decoder(std::vector<std::unique_ptr<Decoder>> steps);

}  // namespace reprox::tok
