// One HTTP/1.1 connection. Every handler runs on the connection's strand;
// the session lives while some pending operation holds its shared_ptr.
// Requests are answered strictly in order (pipelined requests wait in the
// read buffer); one request is in progress at a time.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>

#include "proxy/server/responder.hpp"
#include "proxy/server/server_options.hpp"

namespace reprox {

class RequestHandler {
 public:
  virtual ~RequestHandler() = default;
  // Called on the session's strand; answer through `responder` exactly once.
  virtual void handle(Request&& request, std::shared_ptr<Responder> responder) = 0;
  // An answer the session gives itself instead of calling handle() (413,
  // 431, 408, a malformed head). `head` holds the request's fields read so
  // far (all of them for a 413) and no body. The handler may add the fields
  // it adds to all its answers (CORS). Called on the session's strand.
  virtual void decorate_refusal(const Request& head, Response& response) {
    (void)head;
    (void)response;
  }
};

class ConnectionTracker;

// Writes the status line and fields of `response` (ending with the empty
// line) into `out`, as Beast's serializer would: the head of a whole answer
// (Response) and of a streamed one (chunked, empty body).
void serialize_head(const http::response_header<>& response, std::string& out);

// The head of a RenderedAnswer as serialize_head() writes it for the same
// answer as a Response with keep_alive(keep_alive) and prepare_payload().
void serialize_rendered_head(const RenderedAnswer& answer, bool keep_alive, std::string& out);

class HttpSession final : public Responder, public std::enable_shared_from_this<HttpSession> {
 public:
  HttpSession(ConnectionSocket&& socket, RequestHandler& handler, const ServerOptions& options,
              std::shared_ptr<ConnectionTracker> tracker);
  ~HttpSession() override;

  void run();
  void set_tracker_id(uint64_t id) { tracker_id_ = id; }
  // Drain: close now if waiting for a request, else after the current answer.
  void drain();
  // Closes at once, whatever is in progress (after a drain that timed out).
  void abort();

  void respond(Response&& response) override;
  void respond_rendered(RenderedAnswer&& answer) override;
  void stream(http::response<http::empty_body>&& head, std::shared_ptr<StreamSource> source) override;
  void on_disconnect(std::function<void()> gone) override;
  ConnectionStrand executor() override { return stream_.get_executor(); }

 private:
  void do_read();
  void on_header(beast::error_code ec);
  void read_body();
  void arm_read_deadline();
  void start_read_timer(std::chrono::steady_clock::time_point at);
  void stop_read_deadline();
  // The stream's own expiry (writes, the graceful close); expires_never()
  // only when one was set.
  void stream_expires_after(std::chrono::steady_clock::duration d);
  void stream_expires_never();
  void on_read(beast::error_code ec);
  void reject(http::status status, const std::string& message, const char* type);
  void write_response();
  void write_rendered();
  void on_written(beast::error_code ec, bool keep_alive);
  void finish_answer(bool keep_alive);
  void close_gracefully();

  void on_stream_head(beast::error_code ec);
  void pump();
  void on_chunk(beast::error_code ec, bool last);
  void watch_disconnect();
  void close_now();

  ConnectionStream stream_;
  beast::flat_buffer buffer_;
  RequestHandler& handler_;
  const ServerOptions& options_;
  std::shared_ptr<ConnectionTracker> tracker_;
  uint64_t tracker_id_ = 0;
  std::optional<http::request_parser<http::string_body>> parser_;
  net::basic_waitable_timer<std::chrono::steady_clock, net::wait_traits<std::chrono::steady_clock>, ConnectionStrand>
      read_deadline_;  // one request's whole read (header and body)
  uint64_t read_deadline_seq_ = 0;   // stale-completion guard for read_deadline_
  bool read_timed_out_ = false;
  bool reading_ = false;             // a request is being read: its deadline applies
  std::chrono::steady_clock::time_point read_deadline_at_;  // when the current read times out
  bool read_timer_pending_ = false;  // read_deadline_ has a wait in flight...
  std::chrono::steady_clock::time_point read_timer_at_;     // ...that ends then
  bool stream_expiry_set_ = false;   // stream_ has an expiry (not "never")

  bool keep_alive_ = true;
  bool head_only_ = false;  // the request is HEAD: its answer goes without a body
  bool in_request_ = false;  // between reading a request and finishing its answer
  bool closed_ = false;
  uint64_t answer_seq_ = 0;  // stale-handler guard for disconnect watches

  std::unique_ptr<Response> response_;
  std::unique_ptr<RenderedAnswer> rendered_;  // the answer being written, when it came rendered
  std::string head_bytes_;  // the serialized head of response_ or head_ while it is written
  std::unique_ptr<http::response<http::empty_body>> head_;
  std::shared_ptr<StreamSource> source_;
  std::string chunk_;
  bool chunk_writing_ = false;
  bool stream_done_ = false;
  bool source_drained_ = false;  // the source returned done; the last chunk is next
  std::atomic<bool> wake_pending_{false};
  std::function<void()> gone_;
  bool watching_ = false;
  bool watch_read_pending_ = false;  // the disconnect watch's read is in flight
  enum class AfterWatch { nothing, read, close };
  AfterWatch after_watch_ = AfterWatch::nothing;  // what the answer's end left to the watch
};

}  // namespace reprox
