#include "engine/tokenizer/pattern.hpp"

namespace reprox::tok {

Pattern Pattern::literal(std::string s) {
  Pattern p;
  p.literal_ = std::move(s);
  return p;
}

Pattern Pattern::regex(const std::string& pattern) {
  Pattern p;
  p.regex_ = std::make_shared<const Regex>(oniguruma_compatible(pattern));
  return p;
}

std::vector<Span> Pattern::find_all(std::string_view text) const {
  if (regex_) return regex_->find_all(text);
  std::vector<Span> out;
  if (literal_.empty()) return out;
  size_t pos = 0;
  while ((pos = text.find(literal_, pos)) != std::string_view::npos) {
    out.push_back({pos, pos + literal_.size()});
    pos += literal_.size();
  }
  return out;
}

}  // namespace reprox::tok
