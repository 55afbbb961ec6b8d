// Terminal on a pseudo-terminal of the test's own: raw mode set and
// restored, the alternate screen entered and left, a frame drawn with its
// highlight, keys read, a stop signal seen, the signal handlers restored.

#include "cyber/monitor/terminal.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace cyber {
namespace monitor {
namespace {

// A pty pair: the test plays the terminal emulator on `master`.
class PtyTest : public testing::Test {
 protected:
  void SetUp() override {
    master_ = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    ASSERT_GE(master_, 0);
    ASSERT_EQ(grantpt(master_), 0);
    ASSERT_EQ(unlockpt(master_), 0);
    slave_ = open(ptsname(master_), O_RDWR | O_NOCTTY | O_CLOEXEC);
    ASSERT_GE(slave_, 0);
  }
  void TearDown() override {
    close(slave_);
    close(master_);
  }
  // What the program wrote to the terminal so far (waits at most 10 s for
  // the first byte: the writes are done when this is called).
  std::string Output() {
    std::string all;
    char buf[4096];
    int wait_ms = 10000;
    while (true) {
      pollfd p{master_, POLLIN, 0};
      if (poll(&p, 1, wait_ms) <= 0) break;
      const ssize_t n = read(master_, buf, sizeof buf);
      if (n <= 0) break;
      all.append(buf, static_cast<size_t>(n));
      wait_ms = 0;
    }
    return all;
  }

  int master_ = -1;
  int slave_ = -1;
};

TEST(TerminalNotATtyTest, RefusesAPipeAndSaysWhatToDo) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  absl::StatusOr<std::unique_ptr<Terminal>> t = Terminal::Open(fds[0], fds[1]);
  EXPECT_EQ(t.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(t.status().message(), "--once")) << t.status();
  close(fds[0]);
  close(fds[1]);
}

TEST_F(PtyTest, RefusesOutputToAPipe) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  absl::StatusOr<std::unique_ptr<Terminal>> t = Terminal::Open(slave_, fds[1]);
  EXPECT_EQ(t.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(t.status().message(), "standard output")) << t.status();
  close(fds[0]);
  close(fds[1]);
  termios now{};
  ASSERT_EQ(tcgetattr(slave_, &now), 0);
  EXPECT_TRUE(now.c_lflag & ICANON);  // left as it was
}

TEST_F(PtyTest, RawWhileOpenRestoredAfter) {
  termios before{};
  ASSERT_EQ(tcgetattr(slave_, &before), 0);
  ASSERT_TRUE(before.c_lflag & ICANON);
  {
    absl::StatusOr<std::unique_ptr<Terminal>> t = Terminal::Open(slave_, slave_);
    ASSERT_TRUE(t.ok()) << t.status();
    termios raw{};
    ASSERT_EQ(tcgetattr(slave_, &raw), 0);
    EXPECT_FALSE(raw.c_lflag & ICANON);
    EXPECT_FALSE(raw.c_lflag & ECHO);
    EXPECT_TRUE(raw.c_lflag & ISIG);  // Ctrl-C still raises SIGINT
    EXPECT_TRUE(absl::StrContains(Output(), "\x1b[?1049h"));
  }  // the destructor restores
  termios after{};
  ASSERT_EQ(tcgetattr(slave_, &after), 0);
  EXPECT_EQ(after.c_lflag, before.c_lflag);
  EXPECT_EQ(after.c_iflag, before.c_iflag);
  EXPECT_EQ(after.c_oflag, before.c_oflag);
  const std::string out = Output();
  EXPECT_TRUE(absl::StrContains(out, "\x1b[?1049l")) << out;  // the user's screen back
  EXPECT_TRUE(absl::StrContains(out, "\x1b[?25h")) << out;    // the cursor shown
}

TEST_F(PtyTest, DrawsEveryLineAndHighlightsTheSelection) {
  absl::StatusOr<std::unique_ptr<Terminal>> t = Terminal::Open(slave_, slave_);
  ASSERT_TRUE(t.ok()) << t.status();
  Output();
  Frame frame;
  frame.lines = {"title", "row one", "row two"};
  frame.highlight = 2;
  (*t)->Draw(frame);
  const std::string out = Output();
  EXPECT_TRUE(absl::StartsWith(out, "\x1b[H")) << out;
  EXPECT_TRUE(absl::StrContains(out, "title\x1b[K")) << out;
  EXPECT_TRUE(absl::StrContains(out, "\x1b[7mrow two\x1b[K\x1b[0m")) << out;
  EXPECT_FALSE(absl::StrContains(out, "\x1b[7mrow one")) << out;
}

TEST_F(PtyTest, SizeAsTheTerminalSaysIt) {
  winsize ws{};
  ws.ws_col = 132;
  ws.ws_row = 43;
  ASSERT_EQ(ioctl(master_, TIOCSWINSZ, &ws), 0);
  absl::StatusOr<std::unique_ptr<Terminal>> t = Terminal::Open(slave_, slave_);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ((*t)->size().width, 132);
  EXPECT_EQ((*t)->size().height, 43);
}

TEST_F(PtyTest, ReadsTypedBytesUnbuffered) {
  absl::StatusOr<std::unique_ptr<Terminal>> t = Terminal::Open(slave_, slave_);
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(write(master_, "\x1b[Bq", 4), 4);  // Down, q: no newline needed
  std::string got;
  for (int i = 0; i < 100 && got.size() < 4; ++i) {
    Terminal::Input in = (*t)->ReadInput(absl::Seconds(10));
    EXPECT_FALSE(in.stop_signal.has_value());
    got += in.bytes;
  }
  EXPECT_EQ(got, "\x1b[Bq");
}

TEST_F(PtyTest, AStopSignalEndsTheWaitAndHandlersAreRestored) {
  struct sigaction before {};
  ASSERT_EQ(sigaction(SIGTERM, nullptr, &before), 0);
  {
    absl::StatusOr<std::unique_ptr<Terminal>> t = Terminal::Open(slave_, slave_);
    ASSERT_TRUE(t.ok()) << t.status();
    ASSERT_EQ(raise(SIGTERM), 0);  // caught: the process goes on
    Terminal::Input in = (*t)->ReadInput(absl::Seconds(10));
    ASSERT_TRUE(in.stop_signal.has_value());
    EXPECT_EQ(*in.stop_signal, SIGTERM);
  }
  struct sigaction after {};
  ASSERT_EQ(sigaction(SIGTERM, nullptr, &after), 0);
  EXPECT_EQ(after.sa_handler, before.sa_handler);
}

TEST_F(PtyTest, ACrashRestoresTheTerminalAndStillDiesOfItsSignal) {
  termios before{};
  ASSERT_EQ(tcgetattr(slave_, &before), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const rlimit no_core{0, 0};  // the crash is on purpose: no core file left
    setrlimit(RLIMIT_CORE, &no_core);
    absl::StatusOr<std::unique_ptr<Terminal>> t = Terminal::Open(slave_, slave_);
    if (!t.ok()) _exit(3);
    abort();  // never returns: the handler restores, then SIGABRT's default
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << "status " << status;
  EXPECT_EQ(WTERMSIG(status), SIGABRT);
  termios after{};
  ASSERT_EQ(tcgetattr(slave_, &after), 0);
  EXPECT_EQ(after.c_lflag, before.c_lflag);
  EXPECT_EQ(after.c_iflag, before.c_iflag);
  EXPECT_TRUE(absl::StrContains(Output(), "\x1b[?1049l"));
}

}  // namespace
}  // namespace monitor
}  // namespace cyber
