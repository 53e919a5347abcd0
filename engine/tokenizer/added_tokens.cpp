#include "engine/tokenizer/added_tokens.hpp"

#include <algorithm>

#include "engine/tokenizer/unicode_utils.hpp"

namespace reprox::tok {

AddedTokenMatcher::AddedTokenMatcher(std::vector<AddedToken> tokens) : tokens_(std::move(tokens)) {
  nodes_.emplace_back();
  for (size_t t = 0; t < tokens_.size(); ++t) {
    const std::string& s = tokens_[t].content;
    if (s.empty()) continue;
    first_byte_[static_cast<unsigned char>(s[0])] = true;
    int32_t node = 0;
    for (unsigned char c : s) {
      auto it = nodes_[static_cast<size_t>(node)].children.find(c);
      if (it == nodes_[static_cast<size_t>(node)].children.end()) {
        nodes_.emplace_back();
        const auto child = static_cast<int32_t>(nodes_.size() - 1);
        nodes_[static_cast<size_t>(node)].children.emplace(c, child);
        node = child;
      } else {
        node = it->second;
      }
    }
    nodes_[static_cast<size_t>(node)].token = static_cast<int32_t>(t);
  }
}

int32_t AddedTokenMatcher::longest_at(std::string_view text, size_t pos, size_t& len) const {
  int32_t node = 0;
  int32_t best = -1;
  for (size_t j = pos; j < text.size(); ++j) {
    const auto& children = nodes_[static_cast<size_t>(node)].children;
    auto it = children.find(static_cast<unsigned char>(text[j]));
    if (it == children.end()) break;
    node = it->second;
    if (nodes_[static_cast<size_t>(node)].token >= 0) {
      best = nodes_[static_cast<size_t>(node)].token;
      len = j + 1 - pos;
    }
  }
  return best;
}

namespace {

bool ends_with_word(std::string_view s) {
  if (s.empty()) return false;
  size_t start = 0;
  return is_word_char(utf8_prev(s, s.size(), start));
}

bool starts_with_word(std::string_view s) {
  if (s.empty()) return false;
  size_t i = 0;
  return is_word_char(utf8_next(s, i));
}

}  // namespace

std::vector<Section> AddedTokenMatcher::split(std::string_view text, bool skip_special) const {
  std::vector<Section> out;
  size_t start_offset = 0;
  size_t i = 0;
  while (i < text.size()) {
    if (!first_byte_[static_cast<unsigned char>(text[i])]) {
      ++i;
      continue;
    }
    size_t len = 0;
    const int32_t t = longest_at(text, i, len);
    if (t < 0) {
      ++i;
      continue;
    }
    const AddedToken& tok = tokens_[static_cast<size_t>(t)];
    size_t start = i;
    size_t stop = i + len;
    i = stop;  // matches never overlap, even skipped ones
    if (skip_special && tok.special) continue;
    if (tok.single_word) {
      const bool start_space = start == 0 || !ends_with_word(text.substr(0, start));
      const bool stop_space = stop == text.size() || !starts_with_word(text.substr(stop));
      if (!start_space || !stop_space) continue;
    }
    if (tok.lstrip) {
      size_t newstart = start;
      while (newstart > 0) {
        size_t prev = 0;
        if (!is_unicode_whitespace(utf8_prev(text, newstart, prev))) break;
        newstart = prev;
      }
      start = std::max(newstart, start_offset);
    }
    if (tok.rstrip) {
      while (stop < text.size()) {
        size_t j = stop;
        if (!is_unicode_whitespace(utf8_next(text, j))) break;
        stop = j;
      }
      i = std::max(i, stop);
    }
    if (start_offset < start) out.push_back({start_offset, start, -1});
    out.push_back({start, stop, tok.id});
    start_offset = stop;
  }
  if (start_offset < text.size()) out.push_back({start_offset, text.size(), -1});
  return out;
}

}  // namespace reprox::tok
