#include "engine/tokenizer/pre_tokenizers.hpp"

#include <algorithm>

#include "engine/tokenizer/unicode_utils.hpp"

namespace reprox::tok {

const char* gpt2_split_regex() {
  return "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";
}

std::vector<Piece> split_piece(const Piece& piece, const std::vector<Span>& matches, SplitBehavior behavior,
                               bool invert) {
  struct Part {
    size_t b, e;
    bool is_match;
  };
  const size_t n = piece.text.size();
  std::vector<Part> parts;
  parts.reserve(matches.size() * 2 + 1);
  size_t prev = 0;
  for (const auto& m : matches) {
    if (prev != m.begin) parts.push_back({prev, m.begin, false});
    parts.push_back({m.begin, m.end, true});
    prev = m.end;
  }
  if (prev != n) parts.push_back({prev, n, false});
  if (invert)
    for (auto& p : parts) p.is_match = !p.is_match;

  // (begin, end, remove)
  struct Out {
    size_t b, e;
    bool remove;
  };
  std::vector<Out> outs;
  outs.reserve(parts.size());
  switch (behavior) {
    case SplitBehavior::Isolated:
      for (const auto& p : parts) outs.push_back({p.b, p.e, false});
      break;
    case SplitBehavior::Removed:
      for (const auto& p : parts) outs.push_back({p.b, p.e, p.is_match});
      break;
    case SplitBehavior::Contiguous: {
      bool previous_match = false;
      for (const auto& p : parts) {
        if (p.is_match == previous_match && !outs.empty()) outs.back().e = p.e;
        else outs.push_back({p.b, p.e, false});
        previous_match = p.is_match;
      }
      break;
    }
    case SplitBehavior::MergedWithPrevious: {
      bool previous_match = false;
      for (const auto& p : parts) {
        if (p.is_match && !previous_match && !outs.empty()) outs.back().e = p.e;
        else outs.push_back({p.b, p.e, false});
        previous_match = p.is_match;
      }
      break;
    }
    case SplitBehavior::MergedWithNext: {
      bool previous_match = false;
      for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
        if (it->is_match && !previous_match && !outs.empty()) outs.back().b = it->b;
        else outs.push_back({it->b, it->e, false});
        previous_match = it->is_match;
      }
      std::reverse(outs.begin(), outs.end());
      break;
    }
  }
  std::vector<Piece> result;
  result.reserve(outs.size());
  for (const auto& o : outs) {
    if (o.remove || o.e == o.b) continue;
    result.push_back({piece.text.substr(o.b, o.e - o.b), piece.at_origin && o.b == 0});
  }
  return result;
}

namespace {

void split_each(std::vector<Piece>& pieces, const Pattern& pattern, SplitBehavior behavior, bool invert) {
  std::vector<Piece> out;
  out.reserve(pieces.size() * 4);
  for (const auto& p : pieces) {
    auto parts = split_piece(p, pattern.find_all(p.text), behavior, invert);
    for (auto& q : parts) out.push_back(std::move(q));
  }
  pieces.swap(out);
}

class ByteLevelPreTokenizer final : public PreTokenizer {
 public:
  ByteLevelPreTokenizer(bool add_prefix_space, bool use_regex)
      : add_prefix_space_(add_prefix_space), use_regex_(use_regex) {
    if (use_regex_) regex_ = Pattern::regex(gpt2_split_regex());
  }
  void pre_tokenize(std::vector<Piece>& pieces) const override {
    if (add_prefix_space_)
      for (auto& p : pieces)
        if (p.text.empty() || p.text[0] != ' ') p.text.insert(p.text.begin(), ' ');
    if (use_regex_) split_each(pieces, regex_, SplitBehavior::Isolated, false);
    for (auto& p : pieces) {
      std::string mapped;
      mapped.reserve(p.text.size() * 2);
      for (unsigned char c : p.text) mapped += byte_to_unicode(c);
      p.text.swap(mapped);
    }
  }

 private:
  bool add_prefix_space_, use_regex_;
  Pattern regex_;
};

class SplitPreTokenizer final : public PreTokenizer {
 public:
  SplitPreTokenizer(Pattern p, SplitBehavior b, bool invert) : pattern_(std::move(p)), behavior_(b), invert_(invert) {}
  void pre_tokenize(std::vector<Piece>& pieces) const override { split_each(pieces, pattern_, behavior_, invert_); }

 private:
  Pattern pattern_;
  SplitBehavior behavior_;
  bool invert_;
};

class MetaspacePreTokenizer final : public PreTokenizer {
 public:
  MetaspacePreTokenizer(std::string replacement, PrependScheme scheme, bool split)
      : replacement_(std::move(replacement)), scheme_(scheme), split_(split),
        splitter_(Pattern::literal(replacement_)) {}
  void pre_tokenize(std::vector<Piece>& pieces) const override {
    for (auto& p : pieces) {
      std::string s;
      s.reserve(p.text.size() + replacement_.size());
      for (char c : p.text) {
        if (c == ' ') s += replacement_;
        else s.push_back(c);
      }
      const bool starts = s.compare(0, replacement_.size(), replacement_) == 0;
      const bool prepend = !starts && (scheme_ == PrependScheme::Always ||
                                       (scheme_ == PrependScheme::First && p.at_origin));
      p.text = prepend ? replacement_ + s : std::move(s);
    }
    if (split_) split_each(pieces, splitter_, SplitBehavior::MergedWithNext, false);
  }

 private:
  std::string replacement_;
  PrependScheme scheme_;
  bool split_;
  Pattern splitter_;
};

class SequencePreTokenizer final : public PreTokenizer {
 public:
  explicit SequencePreTokenizer(std::vector<std::unique_ptr<PreTokenizer>> s) : steps_(std::move(s)) {}
  void pre_tokenize(std::vector<Piece>& pieces) const override {
    for (const auto& step : steps_) step->pre_tokenize(pieces);
  }

 private:
  std::vector<std::unique_ptr<PreTokenizer>> steps_;
};

}  // namespace

std::unique_ptr<PreTokenizer> make_byte_level_pre_tokenizer(bool add_prefix_space, bool use_regex) {
  return std::make_unique<ByteLevelPreTokenizer>(add_prefix_space, use_regex);
}
std::unique_ptr<PreTokenizer> make_split_pre_tokenizer(Pattern pattern, SplitBehavior behavior, bool invert) {
  return std::make_unique<SplitPreTokenizer>(std::move(pattern), behavior, invert);
}
std::unique_ptr<PreTokenizer> make_metaspace_pre_tokenizer(std::string replacement, PrependScheme scheme,
                                                           bool split) {
  return std::make_unique<MetaspacePreTokenizer>(std::move(replacement), scheme, split);
}
std::unique_ptr<PreTokenizer> make_sequence_pre_tokenizer(std::vector<std::unique_ptr<PreTokenizer>> steps) {
  return std::make_unique<SequencePreTokenizer>(std::move(steps));
}

}  // namespace reprox::tok
