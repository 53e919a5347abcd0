#include "proxy/backend/sse_parser.hpp"

namespace reprox::backend {

bool SseParser::feed(std::string_view bytes, std::vector<SseEvent>& out) {
  static constexpr char kBom[] = "\xEF\xBB\xBF";
  for (char c : bytes) {
    if (at_start_) {
      if (c == kBom[bom_matched_]) {
        if (++bom_matched_ == 3) at_start_ = false;
        continue;
      }
      at_start_ = false;
      line_.append(kBom, bom_matched_);  // a partial BOM was ordinary text
    }
    if (after_cr_) {
      after_cr_ = false;
      if (c == '\n') continue;
    }
    if (c == '\r') {
      after_cr_ = true;
      end_line(out);
    } else if (c == '\n') {
      end_line(out);
    } else {
      line_.push_back(c);
      if (line_.size() + pending_.data.size() > max_event_bytes_) return false;
    }
  }
  return true;
}

void SseParser::finish(std::vector<SseEvent>& out) {
  if (!line_.empty()) end_line(out);
  dispatch(out);
}

void SseParser::end_line(std::vector<SseEvent>& out) {
  std::string_view line(line_);
  if (line.empty()) {
    dispatch(out);
  } else if (line.front() != ':') {
    size_t colon = line.find(':');
    std::string_view field = line.substr(0, colon);
    std::string_view value;
    if (colon != std::string_view::npos) {
      value = line.substr(colon + 1);
      if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    }
    if (field == "data") {
      if (has_data_) pending_.data.push_back('\n');
      pending_.data.append(value);
      has_data_ = true;
    } else if (field == "event") {
      pending_.event.assign(value);
    }
    // "id", "retry" and unknown fields carry nothing the proxy uses.
  }
  line_.clear();
}

void SseParser::dispatch(std::vector<SseEvent>& out) {
  if (has_data_) out.push_back(std::move(pending_));
  pending_ = SseEvent{};
  has_data_ = false;
}

}  // namespace reprox::backend
