#include "engine/tokenizer/decoders.hpp"

#include "engine/tokenizer/normalizers.hpp"
#include "engine/tokenizer/unicode_utils.hpp"

namespace reprox::tok {

namespace {

class ByteLevelDecoder final : public Decoder {
 public:
  void decode_chain(std::vector<std::string>& tokens) const override {
    decode_chain_raw(tokens);
    tokens[0] = utf8_lossy(tokens[0]);
  }
  void decode_chain_raw(std::vector<std::string>& tokens) const override {
    std::string bytes;
    for (const auto& t : tokens) {
      const size_t mark = bytes.size();
      bool all_mapped = true;
      size_t i = 0;
      while (i < t.size()) {
        const int b = unicode_to_byte(utf8_next(t, i));
        if (b < 0) {
          all_mapped = false;
          break;
        }
        bytes.push_back(static_cast<char>(b));
      }
      if (!all_mapped) {
        bytes.resize(mark);
        bytes += t;
      }
    }
    tokens.assign(1, std::move(bytes));
  }
};

class ReplaceDecoder final : public Decoder {
 public:
  ReplaceDecoder(Pattern p, std::string c) : pattern_(std::move(p)), content_(std::move(c)) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (auto& t : tokens) t = replace_all(pattern_, t, content_);
  }

 private:
  Pattern pattern_;
  std::string content_;
};

int parse_byte_token(const std::string& t) {
  if (t.size() != 6 || t.compare(0, 3, "<0x") != 0 || t[5] != '>') return -1;
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  const int hi = hex(t[3]), lo = hex(t[4]);
  if (hi < 0 || lo < 0) return -1;
  return hi * 16 + lo;
}

class ByteFallbackDecoder final : public Decoder {
 public:
  void decode_chain(std::vector<std::string>& tokens) const override { decode(tokens, false); }
  void decode_chain_raw(std::vector<std::string>& tokens) const override { decode(tokens, true); }

 private:
  static void decode(std::vector<std::string>& tokens, bool raw) {
    std::vector<std::string> out;
    out.reserve(tokens.size());
    std::string pending;
    auto flush = [&]() {
      if (pending.empty()) return;
      if (raw || is_valid_utf8(pending)) out.push_back(pending);
      else
        for (size_t k = 0; k < pending.size(); ++k) out.emplace_back("\xEF\xBF\xBD");
      pending.clear();
    };
    for (auto& t : tokens) {
      const int b = parse_byte_token(t);
      if (b >= 0) {
        pending.push_back(static_cast<char>(b));
      } else {
        flush();
        out.push_back(std::move(t));
      }
    }
    flush();
    tokens.swap(out);
  }
};

class FuseDecoder final : public Decoder {
 public:
  void decode_chain(std::vector<std::string>& tokens) const override {
    std::string all;
    for (const auto& t : tokens) all += t;
    tokens.assign(1, std::move(all));
  }
};

class StripDecoder final : public Decoder {
 public:
  StripDecoder(std::string c, size_t start, size_t stop) : content_(std::move(c)), start_(start), stop_(stop) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (auto& t : tokens) {
      size_t b = 0;
      for (size_t k = 0; k < start_ && b < t.size() && t.compare(b, content_.size(), content_) == 0; ++k)
        b += content_.size();
      size_t e = t.size();
      for (size_t k = 0; k < stop_ && e >= b + content_.size() &&
                         t.compare(e - content_.size(), content_.size(), content_) == 0;
           ++k)
        e -= content_.size();
      t = t.substr(b, e - b);
    }
  }

 private:
  std::string content_;
  size_t start_, stop_;
};

class MetaspaceDecoder final : public Decoder {
 public:
  MetaspaceDecoder(std::string r, PrependScheme s) : replacement_(std::move(r)), scheme_(s) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (size_t i = 0; i < tokens.size(); ++i) {
      std::string& t = tokens[i];
      std::string out;
      out.reserve(t.size());
      // As in HF: in the first token every replacement is dropped (not only a
      // leading one) unless the prepend scheme is "never".
      const bool drop = i == 0 && scheme_ != PrependScheme::Never;
      size_t k = 0;
      while (k < t.size()) {
        if (t.compare(k, replacement_.size(), replacement_) == 0) {
          if (!drop) out.push_back(' ');
          k += replacement_.size();
        } else {
          out.push_back(t[k++]);
        }
      }
      t.swap(out);
    }
  }

 private:
  std::string replacement_;
  PrependScheme scheme_;
};

class SequenceDecoder final : public Decoder {
 public:
  explicit SequenceDecoder(std::vector<std::unique_ptr<Decoder>> s) : steps_(std::move(s)) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (const auto& step : steps_) step->decode_chain(tokens);
  }
  void decode_chain_raw(std::vector<std::string>& tokens) const override {
    for (const auto& step : steps_) step->decode_chain_raw(tokens);
  }

 private:
  std::vector<std::unique_ptr<Decoder>> steps_;
};

}  // namespace

std::unique_ptr<Decoder> make_byte_level_decoder() { return std::make_unique<ByteLevelDecoder>(); }
std::unique_ptr<Decoder> make_replace_decoder(Pattern pattern, std::string content) {
  return std::make_unique<ReplaceDecoder>(std::move(pattern), std::move(content));
}
std::unique_ptr<Decoder> make_byte_fallback_decoder() { return std::make_unique<ByteFallbackDecoder>(); }
std::unique_ptr<Decoder> make_fuse_decoder() { return std::make_unique<FuseDecoder>(); }
std::unique_ptr<Decoder> make_strip_decoder(std::string content, size_t start, size_t stop) {
  return std::make_unique<StripDecoder>(std::move(content), start, stop);
}
std::unique_ptr<Decoder> make_metaspace_decoder(std::string replacement, PrependScheme scheme) {
  return std::make_unique<MetaspaceDecoder>(std::move(replacement), scheme);
}
std::unique_ptr<Decoder> make_sequence_decoder(std::vector<std::unique_ptr<Decoder>> steps) {
  return std::make_unique<SequenceDecoder>(std::move(steps));
}

}  // namespace reprox::tok
