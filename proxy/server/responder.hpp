// How request handlers answer: the HTTP session implements Responder.
// Threading: every Responder method may be called from any thread; the
// session moves the work onto its own strand.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "proxy/server/http_types.hpp"

namespace reprox {

// A pull-based body for streamed (chunked) responses, such as SSE.
// pull() runs on the session's strand.
class StreamSource {
 public:
  enum class Status { more, done };
  virtual ~StreamSource() = default;
  // Appends what is ready to `out` (possibly nothing). Returns done when the
  // body is complete (after appending its last bytes).
  virtual Status pull(std::string& out) = 0;
  // Called once; `wake` (any thread) asks the session to pull again.
  virtual void start(std::function<void()> wake) = 0;
  // The client went away or the write failed; release resources.
  virtual void abort() = 0;
};

// A whole answer whose head is rendered already: `fields` holds every
// field but Content-Length and Connection as "Name: value\r\n" lines (the
// session adds those two). The cache-hit path answers this way: no Beast
// field is allocated, set or walked.
struct RenderedAnswer {
  unsigned status = 200;
  std::string fields;
  std::string body;
};

// Parses `answer.fields` into a Response (for responders without a
// rendered path of their own).
Response to_response(RenderedAnswer&& answer);

class Responder {
 public:
  virtual ~Responder() = default;
  virtual void respond(Response&& response) = 0;
  // As respond(); the default goes through to_response().
  virtual void respond_rendered(RenderedAnswer&& answer) { respond(to_response(std::move(answer))); }
  // Sends `head` with chunked transfer encoding, then the source's bytes.
  virtual void stream(http::response<http::empty_body>&& head, std::shared_ptr<StreamSource> source) = 0;
  // Calls `gone` (on the strand) if the client disconnects before the
  // answer starts; for long waits of non-streamed answers.
  virtual void on_disconnect(std::function<void()> gone) = 0;
  // The connection's strand: what runs there never runs concurrently with
  // the session's own handlers.
  virtual ConnectionStrand executor() = 0;
};

}  // namespace reprox
