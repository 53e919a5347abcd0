// The audit log file and the access log, written by one background thread so
// that request threads never wait on I/O.
//
// Contract:
// - write() queues one audit line (it should end in '\n') for the file at
//   `path`; access() queues one access line for stderr. Neither blocks on
//   I/O: each takes a short mutex and either queues the line or, when its
//   queue already holds `capacity` lines, drops it. The two queues have their
//   own bounds and drop counts (dropped(), access_dropped()), so a stuck
//   audit file costs access lines only their own bound, and vice versa.
// - The writer thread drains both queues in batches and appends each batch
//   with few large ::write calls on a file opened O_WRONLY|O_APPEND|O_CREAT,
//   mode 0640. Lines reach the kernel once per batch (no user-space buffer),
//   in the order they were queued.
// - reopen() asks the writer to close and reopen `path` before its next
//   batch (logrotate "create", or "move then reopen"); it only sets a flag
//   and wakes the writer.
// - When the file cannot be opened or written, its lines are counted as
//   dropped, spdlog::error reports the first failure of each streak, and the
//   open is retried on the next batch and on reopen().
// - The destructor stops accepting lines, writes what is queued (at most the
//   two queues) and joins the writer. It waits for that I/O: a file that
//   never accepts writes (a FIFO nobody reads) keeps it waiting.
//
// Threading: every public member may be called from any thread. The writer
// thread blocks all signals, so SIGPIPE from a closed FIFO becomes EPIPE and
// process signals (SIGHUP, SIGTERM) are delivered to other threads.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace reprox {

struct AuditLogOptions {
  std::string path;              // the audit log file; "" turns the file off
  size_t capacity = 65536;       // lines each queue holds before dropping
  bool access_to_stderr = false;  // whether access() lines are written
  int access_fd = 2;             // where access lines go: stderr (tests may redirect)
};

class AuditLog {
 public:
  explicit AuditLog(AuditLogOptions options);
  ~AuditLog();
  AuditLog(const AuditLog&) = delete;
  AuditLog& operator=(const AuditLog&) = delete;

  // True when audit lines go to a file; callers may skip rendering otherwise.
  bool file_enabled() const { return !options_.path.empty(); }
  bool access_enabled() const { return options_.access_to_stderr; }

  // Queues an audit line. False when it was dropped (queue full, or the log
  // is shutting down; counted in dropped()) or the file is off (not counted).
  bool write(std::string line);
  // Queues an access line; dropped and counted in access_dropped() when its
  // queue is full; ignored when access lines are off.
  void access(std::string line);
  // Closes and reopens the file before the writer's next batch.
  void reopen();

  uint64_t written() const { return written_.load(std::memory_order_relaxed); }  // audit lines
  uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }  // audit lines
  uint64_t access_dropped() const { return access_dropped_.load(std::memory_order_relaxed); }

 private:
  struct Batch {
    std::vector<std::string> file, access;
    bool reopen = false;
  };

  void run();
  bool take_batch(Batch& batch);
  void open_file();
  void close_file();
  void write_file_lines(std::vector<std::string>& lines);
  void write_access_lines(std::vector<std::string>& lines);
  void report_failure(const char* what, int err);

  const AuditLogOptions options_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::vector<std::string> file_queue_, access_queue_;  // guarded by mu_
  bool reopen_requested_ = false;                       // guarded by mu_
  bool stop_ = false;                                   // guarded by mu_
  std::atomic<uint64_t> written_{0}, dropped_{0}, access_dropped_{0};
  // Writer thread only.
  int fd_ = -1;
  bool failing_ = false;
  std::thread writer_;
};

}  // namespace reprox
