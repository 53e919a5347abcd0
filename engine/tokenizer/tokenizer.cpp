#include "engine/tokenizer/tokenizer.hpp"

#include <cstdio>

#include "engine/tokenizer/tokenizer_impl.hpp"
#include "engine/tokenizer/unicode_utils.hpp"

namespace reprox::tok {

void Tokenizer::Impl::index_added_tokens() {
  std::vector<AddedToken> raw, norm;
  for (size_t i = 0; i < added.size(); ++i) {
    const AddedToken& t = added[i];
    added_by_id[t.id] = i;
    added_by_content[t.content] = t.id;
    if (t.special) special_ids.insert(t.id);
    (t.normalized ? norm : raw).push_back(t);
    if (t.id + 1 > vocab_size) vocab_size = t.id + 1;
  }
  raw_matcher = std::make_unique<AddedTokenMatcher>(std::move(raw));
  normalized_matcher = std::make_unique<AddedTokenMatcher>(std::move(norm));
  if (model && model->max_id() + 1 > vocab_size) vocab_size = model->max_id() + 1;
  if (byte_fallback_decoder && model) {
    for (int b = 0; b < 256; ++b) {
      char name[8];
      std::snprintf(name, sizeof(name), "<0x%02X>", b);
      if (auto id = model->token_to_id(name)) byte_token_ids.insert(*id);
    }
  }
}

Tokenizer::Tokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Tokenizer::~Tokenizer() = default;

namespace {

// Pre-tokenizes and BPE-encodes one normalized stretch of plain text.
void encode_plain(const Tokenizer::Impl& m, std::string text, bool at_origin, std::vector<int32_t>& out) {
  if (text.empty()) return;
  std::vector<Piece> pieces;
  pieces.push_back({std::move(text), at_origin});
  if (m.pre_tokenizer) m.pre_tokenizer->pre_tokenize(pieces);
  for (const auto& p : pieces) m.model->tokenize(p.text, out);
}

}  // namespace

std::vector<int32_t> Tokenizer::encode(std::string_view input, bool parse_special) const {
  const Impl& m = *impl_;
  std::string sanitized;
  if (!is_valid_utf8(input)) {
    sanitized = utf8_lossy(input);
    input = sanitized;
  }
  std::vector<int32_t> out;
  out.reserve(input.size() / 3 + 4);
  const bool skip_special = !parse_special;
  for (const Section& sec : m.raw_matcher->split(input, skip_special)) {
    if (sec.added_id >= 0) {
      out.push_back(sec.added_id);
      continue;
    }
    std::string text(input.substr(sec.begin, sec.end - sec.begin));
    if (m.normalizer) text = m.normalizer->normalize(std::move(text));
    const bool at_origin = sec.begin == 0;
    if (m.normalized_matcher->empty()) {
      encode_plain(m, std::move(text), at_origin, out);
      continue;
    }
    for (const Section& sub : m.normalized_matcher->split(text, skip_special)) {
      if (sub.added_id >= 0) out.push_back(sub.added_id);
      else encode_plain(m, text.substr(sub.begin, sub.end - sub.begin), at_origin && sub.begin == 0, out);
    }
  }
  return out;
}

namespace {

// The vocabulary strings of `ids` (added tokens by their content), before
// the decoder chain.
std::vector<std::string> token_strings(const Tokenizer::Impl& m, const std::vector<int32_t>& ids, bool skip_special) {
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (int32_t id : ids) {
    if (skip_special && m.special_ids.count(id)) continue;
    auto it = m.added_by_id.find(id);
    if (it != m.added_by_id.end()) {
      tokens.push_back(m.added[it->second].content);
      continue;
    }
    if (const std::string* t = m.model->id_to_token(id)) tokens.push_back(*t);
  }
  return tokens;
}

std::string run_decoder(const Tokenizer::Impl& m, std::vector<std::string> tokens, bool raw) {
  std::string out;
  if (m.decoder) {
    if (raw) m.decoder->decode_chain_raw(tokens);
    else m.decoder->decode_chain(tokens);
    for (const auto& t : tokens) out += t;
    return out;
  }
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (i) out.push_back(' ');
    out += tokens[i];
  }
  return out;
}

}  // namespace

std::string Tokenizer::decode(const std::vector<int32_t>& ids, bool skip_special) const {
  return run_decoder(*impl_, token_strings(*impl_, ids, skip_special), false);
}

std::vector<std::string> Tokenizer::token_bytes(bool first) const {
  const Impl& m = *impl_;
  auto raw = [&m](const std::vector<int32_t>& ids) { return run_decoder(m, token_strings(m, ids, false), true); };
  std::vector<std::string> out(static_cast<size_t>(m.vocab_size));
  if (first) {
    for (int32_t id = 0; id < m.vocab_size; ++id) out[static_cast<size_t>(id)] = raw({id});
    return out;
  }
  // A token's bytes after others: decode it behind an anchor token and take
  // what it added (decoders strip or drop a leading space at the start only).
  int32_t anchor = token_to_id("a").value_or(-1);
  for (int32_t id = 0; anchor < 0 && id < m.vocab_size; ++id)
    if (!is_special(id) && !raw({id}).empty()) anchor = id;
  const std::string anchor_text = anchor < 0 ? std::string() : raw({anchor});
  for (int32_t id = 0; id < m.vocab_size; ++id) {
    std::string both = raw({anchor, id});
    if (anchor >= 0 && both.compare(0, anchor_text.size(), anchor_text) == 0)
      out[static_cast<size_t>(id)] = both.substr(anchor_text.size());
    else
      out[static_cast<size_t>(id)] = raw({id});
  }
  return out;
}

int32_t Tokenizer::vocab_size() const { return impl_->vocab_size; }

std::optional<int32_t> Tokenizer::token_to_id(std::string_view token) const {
  auto it = impl_->added_by_content.find(std::string(token));
  if (it != impl_->added_by_content.end()) return it->second;
  return impl_->model->token_to_id(token);
}

std::string Tokenizer::id_to_token(int32_t id) const {
  auto it = impl_->added_by_id.find(id);
  if (it != impl_->added_by_id.end()) return impl_->added[it->second].content;
  const std::string* t = impl_->model->id_to_token(id);
  return t ? *t : std::string();
}

bool Tokenizer::is_special(int32_t id) const { return impl_->special_ids.count(id) > 0; }

bool Tokenizer::is_byte_fallback_token(int32_t id) const { return impl_->byte_token_ids.count(id) > 0; }

}  // namespace reprox::tok
