// Hugging Face's tojson filter: Python json.dumps(ensure_ascii=False, ...).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "engine/template/builtins.hpp"
#include "engine/template/py_text.hpp"

#include "common/json.hpp"

namespace reprox::tmpl {
namespace {

struct Dumper {
  int indent;  // < 0: single line
  bool sort_keys;
  const std::string& item_sep;
  const std::string& key_sep;
  Fault& fault;

  // Refuses (leaving a fault for dump) past kMaxBuiltinBytes instead of appending.
  void newline(std::string& out, int depth) const {
    const size_t pad = static_cast<size_t>(indent) * static_cast<size_t>(depth);
    if (pad > kMaxBuiltinBytes || out.size() + pad > kMaxBuiltinBytes) return too_large();
    out.push_back('\n');
    out.append(pad, ' ');
  }
  void too_large() const { fault.fail("tojson: result too large (more than " + std::to_string(kMaxBuiltinBytes) + " bytes)"); }

  bool dump(const Value& v, std::string& out, int depth) const {
    if (fault.set) return false;
    if (out.size() > kMaxBuiltinBytes) {
      too_large();
      return false;
    }
    if (depth > 200) {
      fault.fail("tojson: nesting too deep");
      return false;
    }
    switch (v.kind()) {
      case Value::Kind::None: out += "null"; return true;
      case Value::Kind::Bool: out += v.as_bool() ? "true" : "false"; return true;
      case Value::Kind::Int: out += std::to_string(v.as_int()); return true;
      case Value::Kind::Float: {
        double d = v.as_double();
        if (std::isnan(d))
          out += "NaN";
        else if (std::isinf(d))
          out += d < 0 ? "-Infinity" : "Infinity";
        else
          py::append_float_repr(out, d);
        return true;
      }
      case Value::Kind::String: json::write_string(out, v.as_string()); return true;
      case Value::Kind::List:
      case Value::Kind::Tuple: {
        const List& l = v.as_list();
        if (l.empty()) {
          out += "[]";
          return true;
        }
        out.push_back('[');
        for (size_t i = 0; i < l.size(); ++i) {
          if (i) out += item_sep;
          if (indent >= 0) newline(out, depth + 1);
          if (!dump(l[i], out, depth + 1)) return false;
        }
        if (indent >= 0) newline(out, depth);
        out.push_back(']');
        return true;
      }
      case Value::Kind::Dict:
      case Value::Kind::Namespace: {
        if (v.kind() == Value::Kind::Namespace) {
          fault.fail("Object of type Namespace is not JSON serializable");
          return false;
        }
        const Dict& d = v.as_dict();
        if (d.items.empty()) {
          out += "{}";
          return true;
        }
        std::vector<const std::pair<std::string, Value>*> entries;
        for (const auto& kv : d.items) entries.push_back(&kv);
        if (sort_keys)
          std::stable_sort(entries.begin(), entries.end(), [](auto* a, auto* b) { return a->first < b->first; });
        out.push_back('{');
        for (size_t i = 0; i < entries.size(); ++i) {
          if (i) out += item_sep;
          if (indent >= 0) newline(out, depth + 1);
          json::write_string(out, entries[i]->first);
          out += key_sep;
          if (!dump(entries[i]->second, out, depth + 1)) return false;
        }
        if (indent >= 0) newline(out, depth);
        out.push_back('}');
        return true;
      }
      default:
        fault.fail(std::string("Object of type ") + v.type_name() + " is not JSON serializable");
        return false;
    }
  }
};

}  // namespace

bool to_json(const Value& v, std::string& out, int indent, bool sort_keys, const std::string& item_sep,
             const std::string& key_sep, Fault& fault) {
  Dumper d{indent, sort_keys, item_sep, key_sep, fault};
  return d.dump(v, out, 0) && !fault.set;
}

}  // namespace reprox::tmpl
