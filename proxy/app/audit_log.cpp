#include "proxy/app/audit_log.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <utility>

#include <spdlog/spdlog.h>

namespace reprox {
namespace {

constexpr size_t kChunkBytes = 256 * 1024;  // bytes per ::write, at most (but one line whole)

// Writes all of `data`; returns 0, or the errno of the failed write.
int write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return 0;
}

// Runs `start` in a new thread that has every signal blocked from its first
// instruction: the thread inherits the mask of its creator.
std::thread start_with_signals_blocked(std::function<void()> start) {
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  std::thread thread(std::move(start));
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  return thread;
}

}  // namespace

AuditLog::AuditLog(AuditLogOptions options) : options_(std::move(options)) {
  if (file_enabled() || access_enabled()) writer_ = start_with_signals_blocked([this] { run(); });
}

AuditLog::~AuditLog() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_one();
  if (writer_.joinable()) writer_.join();
  close_file();
}

bool AuditLog::write(std::string line) {
  if (!file_enabled()) return false;
  bool was_empty = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_ || file_queue_.size() >= options_.capacity) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    was_empty = file_queue_.empty() && access_queue_.empty();
    file_queue_.push_back(std::move(line));
  }
  if (was_empty) wake_.notify_one();
  return true;
}

void AuditLog::access(std::string line) {
  if (!access_enabled()) return;
  bool was_empty = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_ || access_queue_.size() >= options_.capacity) {
      access_dropped_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    was_empty = file_queue_.empty() && access_queue_.empty();
    access_queue_.push_back(std::move(line));
  }
  if (was_empty) wake_.notify_one();
}

void AuditLog::reopen() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    reopen_requested_ = true;
  }
  wake_.notify_one();
}

void AuditLog::run() {
  if (file_enabled()) open_file();
  Batch batch;
  while (take_batch(batch)) {
    if (batch.reopen && file_enabled()) {
      close_file();
      open_file();
    }
    if (!batch.file.empty()) write_file_lines(batch.file);
    if (!batch.access.empty()) write_access_lines(batch.access);
  }
}

// Waits for work and moves it into `batch`; false once stopped and drained.
bool AuditLog::take_batch(Batch& batch) {
  batch.file.clear();
  batch.access.clear();
  std::unique_lock<std::mutex> lock(mu_);
  wake_.wait(lock, [this] {
    return stop_ || reopen_requested_ || !file_queue_.empty() || !access_queue_.empty();
  });
  if (stop_ && !reopen_requested_ && file_queue_.empty() && access_queue_.empty()) return false;
  batch.file.swap(file_queue_);
  batch.access.swap(access_queue_);
  batch.reopen = std::exchange(reopen_requested_, false);
  return true;
}

void AuditLog::open_file() {
  fd_ = ::open(options_.path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
  if (fd_ < 0) report_failure("cannot open", errno);
}

void AuditLog::close_file() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void AuditLog::report_failure(const char* what, int err) {
  if (!failing_)
    spdlog::error("audit log: {} {}: {}; dropping lines until it recovers", what, options_.path,
                  std::strerror(err));
  failing_ = true;
}

// Appends `lines` in chunks of about kChunkBytes. On a failed write the rest
// of the lines are dropped and the file is closed, to be reopened next batch.
void AuditLog::write_file_lines(std::vector<std::string>& lines) {
  if (fd_ < 0) open_file();
  if (fd_ < 0) {
    dropped_.fetch_add(lines.size(), std::memory_order_relaxed);
    return;
  }
  std::string chunk;
  chunk.reserve(kChunkBytes);
  size_t done = 0;  // lines written or dropped
  for (size_t i = 0; i < lines.size(); ++i) {
    chunk += lines[i];
    const bool last = i + 1 == lines.size();
    if (!last && chunk.size() + lines[i + 1].size() <= kChunkBytes) continue;
    const size_t count = i + 1 - done;
    if (const int err = write_all(fd_, chunk); err != 0) {
      report_failure("cannot write", err);
      dropped_.fetch_add(lines.size() - done, std::memory_order_relaxed);
      close_file();
      return;
    }
    if (failing_) spdlog::info("audit log: writing {} again", options_.path);
    failing_ = false;
    written_.fetch_add(count, std::memory_order_relaxed);
    done = i + 1;
    chunk.clear();
  }
}

void AuditLog::write_access_lines(std::vector<std::string>& lines) {
  std::string chunk;
  for (const auto& line : lines) chunk += line;
  if (write_all(options_.access_fd, chunk) != 0)
    access_dropped_.fetch_add(lines.size(), std::memory_order_relaxed);
}

}  // namespace reprox
