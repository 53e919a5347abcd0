// Incremental parser for a text/event-stream body (the WHATWG server-sent
// events framing): "field: value" lines, ':' comments, events ended by a
// blank line, LF / CRLF / CR line ends. Bytes may arrive split anywhere.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace reprox::backend {

struct SseEvent {
  std::string event;  // the "event:" field; empty when not sent
  std::string data;   // the "data:" lines joined with '\n'
};

class SseParser {
 public:
  // max_event_bytes bounds the memory one unfinished line or event may hold.
  explicit SseParser(size_t max_event_bytes = 16u << 20) : max_event_bytes_(max_event_bytes) {}

  // Appends every event completed by `bytes` to `out`. Returns false when a
  // line or event exceeds the bound; the parser must not be fed again.
  bool feed(std::string_view bytes, std::vector<SseEvent>& out);
  // End of stream: a last event not followed by a blank line is dispatched
  // too (tolerating servers that omit the final blank line).
  void finish(std::vector<SseEvent>& out);

 private:
  void end_line(std::vector<SseEvent>& out);
  void dispatch(std::vector<SseEvent>& out);

  size_t max_event_bytes_;
  std::string line_;
  SseEvent pending_;
  bool has_data_ = false;
  bool after_cr_ = false;    // last byte was '\r': a following '\n' is part of it
  bool at_start_ = true;     // a leading UTF-8 BOM is skipped
  size_t bom_matched_ = 0;
};

}  // namespace reprox::backend
