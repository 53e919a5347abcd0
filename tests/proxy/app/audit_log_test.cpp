#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <thread>

#include "proxy/app/audit_log.hpp"

namespace reprox {
namespace {

namespace fs = std::filesystem;

class AuditLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "reprox-audit-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Polls `done` every millisecond for up to 5 s.
bool eventually(const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

std::string numbered(const std::string& prefix, int i) { return prefix + std::to_string(i) + "\n"; }

std::string numbered_lines(const std::string& prefix, int count) {
  std::string all;
  for (int i = 0; i < count; ++i) all += numbered(prefix, i);
  return all;
}

TEST_F(AuditLogTest, LinesArriveInOrderAndComplete) {
  const std::string file = path("audit.log");
  AuditLog log(AuditLogOptions{file, 65536});
  const int n = 20000;
  for (int i = 0; i < n; ++i) ASSERT_TRUE(log.write(numbered("line ", i)));
  const std::string expected = numbered_lines("line ", n);
  EXPECT_TRUE(eventually([&] { return read_all(file) == expected; }));
  // The counter moves just after the bytes reach the file.
  EXPECT_TRUE(eventually([&] { return log.written() == uint64_t(n); })) << log.written();
  EXPECT_EQ(log.dropped(), 0u);
  struct stat st {};
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777 & ~0640u, 0u) << std::oct << (st.st_mode & 0777);
}

TEST_F(AuditLogTest, AppendsToAnExistingFile) {
  const std::string file = path("audit.log");
  std::ofstream(file) << "old\n";
  {
    AuditLog log(AuditLogOptions{file, 16});
    ASSERT_TRUE(log.write("new\n"));
  }
  EXPECT_EQ(read_all(file), "old\nnew\n");
}

TEST_F(AuditLogTest, ReopenAfterRenameStartsANewFile) {
  const std::string file = path("audit.log");
  const std::string rotated = path("audit.log.1");
  AuditLog log(AuditLogOptions{file, 1024});
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(log.write(numbered("a", i)));
  const std::string old_lines = numbered_lines("a", 100);
  ASSERT_TRUE(eventually([&] { return read_all(file) == old_lines; }));

  fs::rename(file, rotated);
  log.reopen();
  for (int i = 0; i < 50; ++i) ASSERT_TRUE(log.write(numbered("b", i)));
  const std::string new_lines = numbered_lines("b", 50);
  EXPECT_TRUE(eventually([&] { return read_all(file) == new_lines; })) << read_all(file);
  EXPECT_EQ(read_all(rotated), old_lines);
  // The counter moves just after the bytes reach the file.
  EXPECT_TRUE(eventually([&] { return log.written() == 150u; })) << log.written();
}

TEST_F(AuditLogTest, ReopenWithoutRotationKeepsAppending) {
  const std::string file = path("audit.log");
  AuditLog log(AuditLogOptions{file, 16});
  ASSERT_TRUE(log.write("one\n"));
  ASSERT_TRUE(eventually([&] { return read_all(file) == "one\n"; }));
  log.reopen();
  ASSERT_TRUE(log.write("two\n"));
  EXPECT_TRUE(eventually([&] { return read_all(file) == "one\ntwo\n"; }));
}

// The path is a FIFO whose reader is open but does not read, so the writer
// blocks once the pipe buffer is full. The callers must still return, and
// lines beyond the queue's capacity are refused and counted.
TEST_F(AuditLogTest, StuckWriterDropsInsteadOfBlocking) {
  const std::string fifo = path("audit.fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  auto log = std::make_unique<AuditLog>(AuditLogOptions{fifo, 64});

  const std::string line = std::string(99, 'x') + "\n";
  const int total = 100000;
  uint64_t accepted = 0, refused = 0;
  for (int i = 0; i < total; ++i) (log->write(line) ? accepted : refused)++;
  EXPECT_GT(refused, uint64_t(total / 2));
  EXPECT_EQ(log->dropped(), refused);

  // Read the pipe until the writer closes it: every accepted line arrives.
  ASSERT_EQ(::fcntl(reader, F_SETFL, 0), 0);
  uint64_t received_bytes = 0;
  std::thread drain([&] {
    char buf[65536];
    ssize_t n;
    while ((n = ::read(reader, buf, sizeof buf)) > 0) received_bytes += uint64_t(n);
  });
  EXPECT_TRUE(eventually([&] { return log->written() == accepted; }));
  EXPECT_EQ(log->written() + log->dropped(), uint64_t(total));
  log.reset();
  drain.join();
  ::close(reader);
  EXPECT_EQ(received_bytes, accepted * line.size());
}

TEST_F(AuditLogTest, UnopenablePathCountsDropsThenRecovers) {
  const std::string missing_dir = path("missing");
  const std::string file = missing_dir + "/audit.log";
  AuditLog log(AuditLogOptions{file, 64});
  for (int i = 0; i < 10; ++i) EXPECT_TRUE(log.write(numbered("lost", i)));
  EXPECT_TRUE(eventually([&] { return log.dropped() == 10; }));
  EXPECT_EQ(log.written(), 0u);

  fs::create_directory(missing_dir);
  log.reopen();
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(log.write(numbered("kept", i)));
  EXPECT_TRUE(eventually([&] { return read_all(file) == numbered_lines("kept", 3); }));
  // The counter moves just after the bytes reach the file.
  EXPECT_TRUE(eventually([&] { return log.written() == 3u; })) << log.written();
  EXPECT_EQ(log.dropped(), 10u);
}

TEST_F(AuditLogTest, DestructionWritesQueuedLines) {
  const std::string file = path("audit.log");
  const int n = 50000;
  {
    AuditLog log(AuditLogOptions{file, size_t(n)});
    for (int i = 0; i < n; ++i) ASSERT_TRUE(log.write(numbered("q", i)));
  }
  EXPECT_EQ(read_all(file), numbered_lines("q", n));
}

TEST_F(AuditLogTest, FileOffRefusesWithoutCounting) {
  AuditLog log(AuditLogOptions{"", 16});
  EXPECT_FALSE(log.file_enabled());
  EXPECT_FALSE(log.write("x\n"));
  EXPECT_EQ(log.dropped(), 0u);
  EXPECT_EQ(log.written(), 0u);
}

TEST_F(AuditLogTest, AccessLinesGoToTheirDescriptor) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  {
    AuditLogOptions options;
    options.capacity = 16;
    options.access_to_stderr = true;
    options.access_fd = fds[1];
    AuditLog log(options);
    EXPECT_FALSE(log.file_enabled());
    log.access("first\n");
    log.access("second\n");
  }
  ::close(fds[1]);
  std::string got;
  char buf[256];
  ssize_t n;
  while ((n = ::read(fds[0], buf, sizeof buf)) > 0) got.append(buf, size_t(n));
  ::close(fds[0]);
  EXPECT_EQ(got, "first\nsecond\n");
}

TEST_F(AuditLogTest, AccessLinesOffAreIgnored) {
  AuditLog log(AuditLogOptions{"", 16, false});
  log.access("ignored\n");
  EXPECT_EQ(log.access_dropped(), 0u);
}

}  // namespace
}  // namespace reprox
