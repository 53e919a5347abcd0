// Hugging Face compatible BPE tokenizer (tokenizer.json, or GPT-2's
// vocab.json + merges.txt) and a streaming detokenizer.
//
// Thread-safety: a loaded Tokenizer is immutable apart from an internal,
// mutex-guarded word cache of fixed size (WordCache: its memory does not grow
// with the words seen); encode/decode may be called concurrently.
// Errors: loading throws std::runtime_error naming the file or component;
// encode/decode never throw on any input (invalid UTF-8 input is first
// converted with U+FFFD replacement).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace reprox::tok {

class Tokenizer {
 public:
  // Loads <dir>/tokenizer.json, or else <dir>/vocab.json + <dir>/merges.txt.
  static std::shared_ptr<const Tokenizer> load_dir(const std::string& dir);
  static std::shared_ptr<const Tokenizer> load_tokenizer_json(const std::string& path);
  static std::shared_ptr<const Tokenizer> load_gpt2(const std::string& vocab_json, const std::string& merges_txt);
  // Same as load_tokenizer_json, from the file's text.
  static std::shared_ptr<const Tokenizer> from_json_text(std::string_view json, const std::string& origin);

  // Token ids for `text`, without BOS/EOS post-processing. parse_special:
  // special-token text becomes its id; otherwise it is encoded as plain text
  // (non-special added tokens are matched either way, as in HF).
  std::vector<int32_t> encode(std::string_view text, bool parse_special) const;
  // Text for `ids`; unknown ids are skipped. Invalid UTF-8 becomes U+FFFD.
  std::string decode(const std::vector<int32_t>& ids, bool skip_special) const;

  // For every id (vocab_size entries), the exact bytes it adds to decoded
  // text, special tokens included as their text: after other tokens, or
  // (first) as the first token of a text, where decoders may drop a leading
  // space. Invalid UTF-8 is kept as is (decode() would repair it); "" for an
  // id the vocabulary lacks. For guided decoding.
  std::vector<std::string> token_bytes(bool first) const;

  int32_t vocab_size() const;  // max id + 1, added tokens included
  std::optional<int32_t> token_to_id(std::string_view token) const;
  std::string id_to_token(int32_t id) const;  // raw vocab string; "" if unknown
  bool is_special(int32_t id) const;
  // True for <0xXX> tokens when the decoder has a ByteFallback step. Such a
  // token can change how the bytes before it decode (an invalid group turns
  // into one U+FFFD per byte), so streaming holds text back across them.
  bool is_byte_fallback_token(int32_t id) const;

  struct Impl;
  explicit Tokenizer(std::unique_ptr<Impl> impl);
  ~Tokenizer();
  Tokenizer(const Tokenizer&) = delete;
  Tokenizer& operator=(const Tokenizer&) = delete;

 private:
  std::unique_ptr<Impl> impl_;
};

// Incremental detokenizer: push() returns only text completed by the new
// token, never a partial UTF-8 character; the concatenation of all push()
// results and flush() equals tokenizer->decode(all ids, skip_special).
// Text ending in byte-fallback tokens is released with the next other
// token (or by flush), since a later byte can still invalidate the group.
// Not thread-safe (one per stream).
class StreamDecoder {
 public:
  explicit StreamDecoder(std::shared_ptr<const Tokenizer> tokenizer, bool skip_special = true);
  std::string push(int32_t id);
  // Emits whatever is held back (incomplete bytes become U+FFFD) and resets.
  std::string flush();

 private:
  std::shared_ptr<const Tokenizer> tok_;
  bool skip_special_;
  std::vector<int32_t> ids_;  // window: ids_[0, prefix_index_) decode to prefix_
  std::string prefix_;
  size_t prefix_index_ = 0;
};

}  // namespace reprox::tok
