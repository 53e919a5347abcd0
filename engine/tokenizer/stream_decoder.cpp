// StreamDecoder: the windowed algorithm of HF tokenizers' DecodeStream. The
// window ids_ always starts at a token boundary where earlier output ended
// on a complete character, so decoding the window reproduces exactly the
// tail of the full decode (decoder rules that look at the first token, such
// as Strip and Metaspace, see the same first token in prefix_ and in the
// extended window). A run of byte-fallback tokens is decoded as one group by
// HF's ByteFallback (all of it becomes U+FFFD if invalid), so text is held
// back while the window ends in such a token.
#include "engine/tokenizer/tokenizer.hpp"

namespace reprox::tok {

namespace {
constexpr std::string_view kReplacement = "\xEF\xBF\xBD";
bool ends_with_replacement(const std::string& s) {
  return s.size() >= 3 && std::string_view(s).substr(s.size() - 3) == kReplacement;
}
}  // namespace

StreamDecoder::StreamDecoder(std::shared_ptr<const Tokenizer> tokenizer, bool skip_special)
    : tok_(std::move(tokenizer)), skip_special_(skip_special) {}

std::string StreamDecoder::push(int32_t id) {
  // Invariant: prefix_ == decode(ids_[0, prefix_index_)) and all of it has
  // been returned already; ids_[prefix_index_, end) are held back.
  ids_.push_back(id);
  // Tokens that decode to nothing (skipped specials, unknown ids) do not end
  // a byte group either.
  if (tok_->is_byte_fallback_token(id) || (skip_special_ && tok_->is_special(id)) || id < 0 ||
      id >= tok_->vocab_size())
    return {};
  std::string text = tok_->decode(ids_, skip_special_);
  if (text.size() <= prefix_.size() || ends_with_replacement(text) ||
      text.compare(0, prefix_.size(), prefix_) != 0)
    return {};
  std::string fresh = text.substr(prefix_.size());
  ids_.erase(ids_.begin(), ids_.begin() + static_cast<std::ptrdiff_t>(prefix_index_));
  prefix_ = tok_->decode(ids_, skip_special_);
  prefix_index_ = ids_.size();
  return fresh;
}

std::string StreamDecoder::flush() {
  std::string text = tok_->decode(ids_, skip_special_);
  std::string rest;
  if (text.size() > prefix_.size() && text.compare(0, prefix_.size(), prefix_) == 0)
    rest = text.substr(prefix_.size());
  ids_.clear();
  prefix_.clear();
  prefix_index_ = 0;
  return rest;
}

}  // namespace reprox::tok
