#include "proxy/app/audit_record.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace reprox {
namespace {

constexpr int64_t kMinMs = -62167219200000;  // 0000-01-01T00:00:00.000Z
constexpr int64_t kMaxMs = 253402300799999;  // 9999-12-31T23:59:59.999Z

struct CivilDate {
  int64_t year;
  unsigned month, day;
};

// Days since 1970-01-01 to a proleptic Gregorian date (H. Hinnant's algorithm).
CivilDate civil_from_days(int64_t days) {
  days += 719468;
  const int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  const auto doe = static_cast<unsigned>(days - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned day = doy - (153 * mp + 2) / 5 + 1;
  const unsigned month = mp < 10 ? mp + 3 : mp - 9;
  return {static_cast<int64_t>(yoe) + era * 400 + (month <= 2 ? 1 : 0), month, day};
}

int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0)) ? 1 : 0); }

// A JSON string, with ill-formed UTF-8 replaced so the line stays valid JSON.
void write_text(std::string& out, std::string_view s) {
  if (json::valid_utf8(s))
    json::write_string(out, s);
  else
    json::write_string(out, json::utf8_lossy(s));
}

void write_key(std::string& out, std::string_view key) {
  out += ",\"";
  out += key;
  out += "\":";
}

void write_field(std::string& out, std::string_view key, std::string_view value) {
  write_key(out, key);
  write_text(out, value);
}
void write_field(std::string& out, std::string_view key, int64_t value) {
  write_key(out, key);
  json::write_int(out, value);
}
void write_field(std::string& out, std::string_view key, double value) {
  write_key(out, key);
  json::write_number(out, value);
}
void write_field(std::string& out, std::string_view key, bool value) {
  write_key(out, key);
  out += value ? "true" : "false";
}

void write_params(std::string& out, const AuditParams& p) {
  write_key(out, "params");
  out += "{\"temperature\":";
  json::write_number(out, p.temperature);
  write_field(out, "top_p", p.top_p);
  write_field(out, "top_k", p.top_k);
  write_field(out, "max_tokens", p.max_tokens);
  write_field(out, "n", p.n);
  write_key(out, "stop");
  out.push_back('[');
  for (size_t i = 0; i < p.stop.size(); ++i) {
    if (i) out.push_back(',');
    write_text(out, p.stop[i]);
  }
  out.push_back(']');
  write_field(out, "presence_penalty", p.presence_penalty);
  write_field(out, "frequency_penalty", p.frequency_penalty);
  write_field(out, "logprobs", p.logprobs);
  write_field(out, "top_logprobs", p.top_logprobs);
  if (!p.response_format.empty()) write_field(out, "response_format", p.response_format);
  write_field(out, "stream", p.stream);
  out.push_back('}');
}

// Appends `s` for the access line: printable ASCII as is, the rest as \xHH.
// Spaces are escaped too unless `keep_spaces`.
void append_sanitized(std::string& out, std::string_view s, bool keep_spaces) {
  static const char* hex = "0123456789abcdef";
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    const bool plain = c > 0x20 && c < 0x7f && c != '"' && c != '\\';
    if (plain || (c == ' ' && keep_spaces)) {
      out.push_back(ch);
    } else {
      out += "\\x";
      out.push_back(hex[c >> 4]);
      out.push_back(hex[c & 15]);
    }
  }
}

void append_field_or_dash(std::string& out, std::string_view s) {
  if (s.empty())
    out.push_back('-');
  else
    append_sanitized(out, s, false);
}

}  // namespace

AuditParams audit_params(const api::ChatRequest& request, int64_t effective_max_tokens) {
  AuditParams p;
  p.temperature = request.temperature;
  p.top_p = request.top_p;
  p.top_k = request.top_k;
  p.max_tokens = effective_max_tokens;
  p.n = request.n;
  p.stop = request.stop;
  p.presence_penalty = request.presence_penalty;
  p.frequency_penalty = request.frequency_penalty;
  p.logprobs = request.logprobs;
  p.top_logprobs = request.top_logprobs;
  if (const json::Value* type = request.response_format.find("type"); type && type->is_string())
    p.response_format = type->as_string();
  p.stream = request.stream;
  return p;
}

std::string rfc3339_utc_ms(int64_t unix_ms) {
  unix_ms = std::clamp(unix_ms, kMinMs, kMaxMs);
  const int64_t days = floor_div(unix_ms, 86400000);
  const int64_t ms_of_day = unix_ms - days * 86400000;
  const CivilDate date = civil_from_days(days);
  const auto seconds = static_cast<unsigned>(ms_of_day / 1000);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02u:%02u:%02u.%03uZ", static_cast<int>(date.year),
                date.month, date.day, seconds / 3600, seconds / 60 % 60, seconds % 60,
                static_cast<unsigned>(ms_of_day % 1000));
  return buf;
}

std::string audit_json_line(const AuditRecord& r) {
  std::string out;
  out.reserve(512);
  out += "{\"time\":\"";
  out += rfc3339_utc_ms(r.time_ms);
  out.push_back('"');
  write_field(out, "time_ms", r.time_ms);
  write_field(out, "key", r.key);
  write_field(out, "tenant", r.tenant);
  write_field(out, "model", r.model);
  write_key(out, "seed");
  json::write_uint(out, r.seed);
  write_field(out, "seed_injected", r.seed_injected);
  write_params(out, r.params);
  write_field(out, "mode", r.mode);
  write_field(out, "fingerprint", r.fingerprint);
  write_field(out, "cache", r.cache);
  write_field(out, "tier", r.tier);
  write_field(out, "rule", r.rule);
  write_field(out, "ttl_s", r.ttl_s);
  write_field(out, "prompt_tokens", r.prompt_tokens);
  write_field(out, "completion_tokens", r.completion_tokens);
  write_field(out, "cached_tokens", r.cached_tokens);
  write_field(out, "latency_ms", std::round(r.latency_ms * 1000.0) / 1000.0);
  write_field(out, "status", int64_t{r.status});
  write_field(out, "error", r.error);
  if (r.messages) {
    write_key(out, "messages");
    json::dump(*r.messages, out);
  }
  out += "}\n";
  return out;
}

std::string access_line(const AuditRecord& r, std::string_view peer, std::string_view method,
                        std::string_view target) {
  std::string out;
  out.reserve(160);
  out += rfc3339_utc_ms(r.time_ms);
  out.push_back(' ');
  append_field_or_dash(out, peer);
  out += " \"";
  append_sanitized(out, method, true);
  out.push_back(' ');
  append_sanitized(out, target, true);
  out += "\" ";
  out += std::to_string(r.status);
  out.push_back(' ');
  append_field_or_dash(out, r.cache);
  out.push_back(' ');
  append_field_or_dash(out, r.tier);
  char latency[32];  // a wildly large value is cut, never overflowed
  std::snprintf(latency, sizeof latency, " %.2fms", r.latency_ms);
  out += latency;
  out += " key=";
  append_field_or_dash(out, std::string_view(r.key).substr(0, 16));
  out += " model=";
  append_field_or_dash(out, r.model);
  if (!r.tenant.empty()) {
    out += " tenant=";
    append_sanitized(out, std::string_view(r.tenant).substr(0, 8), false);
  }
  if (!r.error.empty()) {
    out += " error=";
    append_sanitized(out, r.error, false);
  }
  out.push_back('\n');
  return out;
}

}  // namespace reprox
