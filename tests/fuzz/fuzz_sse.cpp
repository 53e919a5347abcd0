// Fuzz target: the upstream SSE parser and the chat stream decoder. The
// input's first bytes choose the event size bound, the number of choices
// and the points where the stream is cut into reads; the rest is the
// stream.
// Properties: feeding the stream whole or cut anywhere gives the same
// events and the same overflow verdict; each "data:" payload (as an
// upstream chunk) and the whole body (as a non-stream response) either
// decode or are rejected with a message, and every decoded event names a
// choice below n.
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "proxy/backend/chat_stream_decoder.hpp"
#include "proxy/backend/sse_parser.hpp"
#include "tests/fuzz/fuzz_check.hpp"

namespace {

using reprox::backend::ChatStreamDecoder;
using reprox::backend::SseEvent;
using reprox::backend::SseParser;

struct Parsed {
  std::vector<SseEvent> events;
  bool ok = true;
};

Parsed parse(const std::string& stream, const std::vector<size_t>& cuts, size_t bound) {
  SseParser parser(bound);
  Parsed p;
  size_t from = 0;
  for (size_t i = 0; i <= cuts.size() && p.ok; ++i) {
    const size_t to = i < cuts.size() ? cuts[i] : stream.size();
    p.ok = parser.feed(std::string_view(stream).substr(from, to - from), p.events);
    from = to;
  }
  if (p.ok) parser.finish(p.events);
  return p;
}

bool same(const Parsed& a, const Parsed& b) {
  if (a.ok != b.ok || a.events.size() != b.events.size()) return false;
  for (size_t i = 0; i < a.events.size(); ++i)
    if (a.events[i].event != b.events[i].event || a.events[i].data != b.events[i].data) return false;
  return true;
}

void check_decoded(const std::vector<reprox::GenEvent>& out, uint32_t n) {
  for (const auto& e : out) FUZZ_CHECK(e.choice < n, "a decoded event names a choice below n");
}

void decode(const Parsed& parsed, const std::string& stream, uint32_t n) {
  ChatStreamDecoder chunks(n);
  for (const auto& event : parsed.events) {
    if (event.data == "[DONE]") break;
    std::vector<reprox::GenEvent> out;
    std::string error;
    if (!chunks.apply_chunk(event.data, out, &error)) {
      FUZZ_CHECK(!error.empty(), "a rejected chunk explains itself");
      break;
    }
    check_decoded(out, n);
  }
  FUZZ_CHECK(chunks.first_unfinished() <= n, "first_unfinished is at most n");
  ChatStreamDecoder whole(n);
  std::vector<reprox::GenEvent> out;
  std::string error;
  if (whole.apply_full_response(stream, out, &error))
    check_decoded(out, n);
  else
    FUZZ_CHECK(!error.empty(), "a rejected response explains itself");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  const size_t bound = in.ConsumeIntegralInRange<size_t>(1, 4096);
  const uint32_t n = in.ConsumeIntegralInRange<uint32_t>(1, 4);
  const size_t n_cuts = in.ConsumeIntegralInRange<size_t>(0, 16);
  std::vector<uint16_t> raw_cuts;
  for (size_t i = 0; i < n_cuts; ++i) raw_cuts.push_back(in.ConsumeIntegral<uint16_t>());
  const std::string stream = in.ConsumeRemainingBytesAsString();
  std::vector<size_t> cuts;
  for (uint16_t c : raw_cuts) cuts.push_back(stream.empty() ? 0 : c % (stream.size() + 1));
  std::sort(cuts.begin(), cuts.end());

  const Parsed whole = parse(stream, {}, bound);
  const Parsed split = parse(stream, cuts, bound);
  FUZZ_CHECK(same(whole, split), "cutting the stream does not change the events");
  std::vector<size_t> bytewise;
  for (size_t i = 1; i < stream.size(); ++i) bytewise.push_back(i);
  FUZZ_CHECK(same(whole, parse(stream, bytewise, bound)), "byte-by-byte reads give the same events");
  decode(whole, stream, n);
  return 0;
}
