#include "engine/template/slicing.hpp"

#include <vector>

#include "engine/template/py_text.hpp"

namespace reprox::tmpl {

bool py_slice(const Value& obj, const SliceBounds& bounds, Value* out, std::string* error) {
  const int64_t step = bounds.step.value_or(1);
  if (step == 0) {
    *error = "slice step cannot be zero";
    return false;
  }
  const bool is_str = obj.is_string();
  if (!is_str && !obj.is_sequence()) {
    *error = "'" + std::string(obj.type_name()) + "' object is not subscriptable";
    return false;
  }
  std::vector<char32_t> cps;
  const bool ascii = is_str && py::is_ascii(obj.as_string());
  if (is_str && !ascii) cps = py::decode(obj.as_string());
  const int64_t n = is_str ? (ascii ? static_cast<int64_t>(obj.as_string().size()) : static_cast<int64_t>(cps.size()))
                           : static_cast<int64_t>(obj.as_list().size());
  const auto clamp = [&](const std::optional<int64_t>& given, int64_t dflt) {
    if (!given) return dflt;
    int64_t v = *given;
    if (v < 0) v += n;
    if (step > 0) return v < 0 ? int64_t{0} : (v > n ? n : v);
    return v < 0 ? int64_t{-1} : (v >= n ? n - 1 : v);
  };
  const int64_t start = clamp(bounds.start, step > 0 ? 0 : n - 1);
  const int64_t stop = clamp(bounds.stop, step > 0 ? n : -1);
  std::vector<int64_t> idx;
  for (int64_t i = start; step > 0 ? i < stop : i > stop;) {
    idx.push_back(i);
    if (__builtin_add_overflow(i, step, &i)) break;  // a huge step: past either end
  }
  if (is_str) {
    std::string s;
    if (ascii) {
      for (int64_t i : idx) s.push_back(obj.as_string()[i]);
    } else {
      for (int64_t i : idx) py::append_utf8(s, cps[i]);
    }
    *out = Value(std::move(s));
    return true;
  }
  List items;
  for (int64_t i : idx) items.push_back(obj.as_list()[i]);
  *out = obj.kind() == Value::Kind::Tuple ? Value::tuple(std::move(items)) : Value::list(std::move(items));
  return true;
}

}  // namespace reprox::tmpl
