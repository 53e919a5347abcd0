#define PCRE2_CODE_UNIT_WIDTH 8
#include "engine/tokenizer/regex.hpp"

#include <pcre2.h>

#include <stdexcept>

namespace reprox::tok {

struct Regex::Impl {
  pcre2_code* code = nullptr;
  bool jit = false;
};

Regex::Regex(const std::string& pattern) : impl_(std::make_unique<Impl>()) {
  int err = 0;
  PCRE2_SIZE err_off = 0;
  impl_->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                              PCRE2_UTF | PCRE2_UCP, &err, &err_off, nullptr);
  if (impl_->code == nullptr) {
    PCRE2_UCHAR buf[256];
    pcre2_get_error_message(err, buf, sizeof(buf));
    throw std::runtime_error("tokenizer: cannot compile regex '" + pattern + "' at offset " +
                             std::to_string(err_off) + ": " + reinterpret_cast<const char*>(buf));
  }
  impl_->jit = pcre2_jit_compile(impl_->code, PCRE2_JIT_COMPLETE) == 0;
}

Regex::~Regex() {
  if (impl_ && impl_->code) pcre2_code_free(impl_->code);
}

namespace {

// Per-thread JIT stack (32 KiB growing to 4 MiB) so that long runs of one
// character class cannot exhaust PCRE2's default 32 KiB machine stack.
struct ThreadMatchContext {
  pcre2_match_context* context = nullptr;
  pcre2_jit_stack* stack = nullptr;
  ThreadMatchContext() {
    context = pcre2_match_context_create(nullptr);
    stack = pcre2_jit_stack_create(32 * 1024, 4 * 1024 * 1024, nullptr);
    if (context && stack) pcre2_jit_stack_assign(context, nullptr, stack);
  }
  ~ThreadMatchContext() {
    if (stack) pcre2_jit_stack_free(stack);
    if (context) pcre2_match_context_free(context);
  }
};

pcre2_match_context* thread_match_context() {
  thread_local ThreadMatchContext tmc;
  return tmc.context;
}

}  // namespace

std::vector<Span> Regex::find_all(std::string_view text) const {
  std::vector<Span> out;
  pcre2_match_data* md = pcre2_match_data_create_from_pattern(impl_->code, nullptr);
  if (md == nullptr) return out;
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t pos = 0;
  while (pos <= text.size()) {
    pcre2_match_context* ctx = thread_match_context();
    int rc = impl_->jit ? pcre2_jit_match(impl_->code, subject, text.size(), pos, 0, md, ctx)
                        : pcre2_match(impl_->code, subject, text.size(), pos, PCRE2_NO_UTF_CHECK, md, ctx);
    if (rc < 0 && rc != PCRE2_ERROR_NOMATCH && impl_->jit)  // JIT limits: retry with the interpreter
      rc = pcre2_match(impl_->code, subject, text.size(), pos, PCRE2_NO_UTF_CHECK | PCRE2_NO_JIT, md, ctx);
    if (rc < 0) break;  // no further match (or a resource limit: the rest stays one piece)
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
    const size_t b = ov[0], e = ov[1];
    out.push_back({b, e});
    if (e > b) {
      pos = e;
    } else {
      if (e >= text.size()) break;
      pos = e + 1;
      while (pos < text.size() && (static_cast<unsigned char>(text[pos]) & 0xC0) == 0x80) ++pos;
    }
  }
  pcre2_match_data_free(md);
  return out;
}


namespace {
constexpr const char* kWhiteSpaceSet =
    "\\t\\n\\x{0B}\\f\\r\\x{20}\\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}"
    "\\x{205F}\\x{3000}";
}

std::string oniguruma_compatible(std::string_view p) {
  // Outside a class: \s -> [set], \S -> [^set]. Inside a class: \s -> set;
  // \S inside a class is left as PCRE2's own (no HF model uses it).
  std::string out;
  out.reserve(p.size() + 64);
  bool in_class = false;
  for (size_t i = 0; i < p.size(); ++i) {
    const char c = p[i];
    if (c == '\\' && i + 1 < p.size()) {
      const char n = p[i + 1];
      if (n == 's') {
        if (in_class) out += kWhiteSpaceSet;
        else out += std::string("[") + kWhiteSpaceSet + "]";
      } else if (n == 'S' && !in_class) {
        out += std::string("[^") + kWhiteSpaceSet + "]";
      } else {
        out.push_back(c);
        out.push_back(n);
      }
      ++i;
      continue;
    }
    if (!in_class && c == '[') {
      in_class = true;
      out.push_back(c);
      // A ']' or '^]' right after '[' is literal.
      if (i + 1 < p.size() && p[i + 1] == '^') out.push_back(p[++i]);
      if (i + 1 < p.size() && p[i + 1] == ']') out.push_back(p[++i]);
      continue;
    }
    if (in_class && c == '[' && i + 1 < p.size() && p[i + 1] == ':') {
      const size_t close = p.find(":]", i + 2);
      if (close != std::string_view::npos) {
        out.append(p.substr(i, close + 2 - i));
        i = close + 1;
        continue;
      }
    }
    if (in_class && c == ']') in_class = false;
    out.push_back(c);
  }
  return out;
}

}  // namespace reprox::tok
