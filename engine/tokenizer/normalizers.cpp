#include "engine/tokenizer/normalizers.hpp"

#include "engine/tokenizer/unicode_utils.hpp"

namespace reprox::tok {

std::string replace_all(const Pattern& pattern, const std::string& s, const std::string& content) {
  const auto matches = pattern.find_all(s);
  if (matches.empty()) return s;
  std::string out;
  out.reserve(s.size() + matches.size() * content.size());
  size_t prev = 0;
  for (const auto& m : matches) {
    out.append(s, prev, m.begin - prev);
    out += content;
    prev = m.end;
  }
  out.append(s, prev, std::string::npos);
  return out;
}

namespace {

class UnicodeNormalizer final : public Normalizer {
 public:
  explicit UnicodeNormalizer(UnicodeForm f) : form_(f) {}
  std::string normalize(std::string s) const override {
    switch (form_) {
      case UnicodeForm::NFC: return normalize_nfc(s);
      case UnicodeForm::NFD: return normalize_nfd(s);
      case UnicodeForm::NFKC: return normalize_nfkc(s);
      case UnicodeForm::NFKD: return normalize_nfkd(s);
    }
    return s;
  }

 private:
  UnicodeForm form_;
};

class LowercaseNormalizer final : public Normalizer {
 public:
  std::string normalize(std::string s) const override { return lowercase(s); }
};

class PrependNormalizer final : public Normalizer {
 public:
  explicit PrependNormalizer(std::string p) : prefix_(std::move(p)) {}
  std::string normalize(std::string s) const override {
    if (s.empty()) return s;
    return prefix_ + s;
  }

 private:
  std::string prefix_;
};

class ReplaceNormalizer final : public Normalizer {
 public:
  ReplaceNormalizer(Pattern p, std::string c) : pattern_(std::move(p)), content_(std::move(c)) {}
  std::string normalize(std::string s) const override { return replace_all(pattern_, s, content_); }

 private:
  Pattern pattern_;
  std::string content_;
};

class StripNormalizer final : public Normalizer {
 public:
  StripNormalizer(bool l, bool r) : left_(l), right_(r) {}
  std::string normalize(std::string s) const override {
    size_t b = 0, e = s.size();
    if (left_) {
      while (b < e) {
        size_t j = b;
        if (!is_unicode_whitespace(utf8_next(s, j))) break;
        b = j;
      }
    }
    if (right_) {
      while (e > b) {
        size_t start = 0;
        if (!is_unicode_whitespace(utf8_prev(s, e, start))) break;
        e = start;
      }
    }
    return s.substr(b, e - b);
  }

 private:
  bool left_, right_;
};

class SequenceNormalizer final : public Normalizer {
 public:
  explicit SequenceNormalizer(std::vector<std::unique_ptr<Normalizer>> s) : steps_(std::move(s)) {}
  std::string normalize(std::string s) const override {
    for (const auto& step : steps_) s = step->normalize(std::move(s));
    return s;
  }

 private:
  std::vector<std::unique_ptr<Normalizer>> steps_;
};

}  // namespace

std::unique_ptr<Normalizer> make_unicode_normalizer(UnicodeForm form) {
  return std::make_unique<UnicodeNormalizer>(form);
}
std::unique_ptr<Normalizer> make_lowercase_normalizer() { return std::make_unique<LowercaseNormalizer>(); }
std::unique_ptr<Normalizer> make_prepend_normalizer(std::string prefix) {
  return std::make_unique<PrependNormalizer>(std::move(prefix));
}
std::unique_ptr<Normalizer> make_replace_normalizer(Pattern pattern, std::string content) {
  return std::make_unique<ReplaceNormalizer>(std::move(pattern), std::move(content));
}
std::unique_ptr<Normalizer> make_strip_normalizer(bool left, bool right) {
  return std::make_unique<StripNormalizer>(left, right);
}
std::unique_ptr<Normalizer> make_sequence_normalizer(std::vector<std::unique_ptr<Normalizer>> steps) {
  return std::make_unique<SequenceNormalizer>(std::move(steps));
}

}  // namespace reprox::tok
