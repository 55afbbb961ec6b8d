#include "cyber/monitor/terminal.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace cyber {
namespace monitor {
namespace {

constexpr char kEnterScreen[] = "\x1b[?1049h\x1b[?25l\x1b[2J";  // alternate screen, no cursor
constexpr char kLeaveScreen[] = "\x1b[0m\x1b[?25h\x1b[?1049l";
constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP};

// The self-pipe of the open Terminal: the handlers write the signal's
// number to it (write() is async-signal-safe).
std::atomic<int> g_signal_pipe_write{-1};
int g_signal_pipe_read = -1;
struct sigaction g_saved_actions[3];
struct sigaction g_saved_winch;
struct sigaction g_saved_fatal[NSIG];

void OnStopSignal(int signal) {
  const int fd = g_signal_pipe_write.load();
  if (fd < 0) return;
  const unsigned char b = static_cast<unsigned char>(signal);
  const int saved_errno = errno;
  (void)!write(fd, &b, 1);
  errno = saved_errno;
}

void OnWinch(int) {}  // only interrupts poll(); size() asks the terminal

// A crash while the view is up: the terminal as it was, then the signal's
// default action (a core dump, the shell's "Aborted"). Only
// async-signal-safe calls (write, tcsetattr, sigaction, raise).
constexpr int kFatalSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
std::atomic<bool> g_restore_on_crash{false};
int g_crash_in_fd = -1;
int g_crash_out_fd = -1;
termios g_crash_saved{};

void OnFatalSignal(int signal) {
  if (g_restore_on_crash.exchange(false)) {
    (void)!write(g_crash_out_fd, kLeaveScreen, sizeof kLeaveScreen - 1);
    tcsetattr(g_crash_in_fd, TCSANOW, &g_crash_saved);
  }
  struct sigaction fallback {};
  fallback.sa_handler = SIG_DFL;
  sigemptyset(&fallback.sa_mask);
  sigaction(signal, &fallback, nullptr);
  raise(signal);
}

void WriteAll(int fd, const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    const ssize_t n = write(fd, s.data() + done, s.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<Terminal>> Terminal::Open(int in_fd, int out_fd) {
  termios saved{};
  if (!isatty(in_fd) || tcgetattr(in_fd, &saved) != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cyber_monitor: standard input (fd ", in_fd,
        ") is not a terminal; run it in a terminal, or with --once for one snapshot"));
  }
  if (!isatty(out_fd)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cyber_monitor: standard output (fd ", out_fd,
        ") is not a terminal (redirected?); use --once to write a snapshot to a file"));
  }
  int fds[2];
  if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) {
    return absl::InternalError(absl::StrCat("cyber_monitor: pipe for signals: ", strerror(errno)));
  }
  g_signal_pipe_read = fds[0];
  g_signal_pipe_write.store(fds[1]);
  struct sigaction action {};
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  for (size_t i = 0; i < 3; ++i) sigaction(kStopSignals[i], &action, &g_saved_actions[i]);
  action.sa_handler = OnWinch;
  sigaction(SIGWINCH, &action, &g_saved_winch);
  g_crash_in_fd = in_fd;
  g_crash_out_fd = out_fd;
  g_crash_saved = saved;
  g_restore_on_crash.store(true);
  action.sa_handler = OnFatalSignal;
  action.sa_flags = SA_RESETHAND;
  for (int signal : kFatalSignals) sigaction(signal, &action, &g_saved_fatal[signal]);

  termios raw = saved;
  raw.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO | IEXTEN);
  raw.c_iflag &= ~static_cast<tcflag_t>(IXON | ICRNL | INLCR);
  raw.c_cc[VMIN] = 0;
  raw.c_cc[VTIME] = 0;
  tcsetattr(in_fd, TCSAFLUSH, &raw);
  std::unique_ptr<Terminal> t(new Terminal(in_fd, out_fd, saved));
  WriteAll(out_fd, kEnterScreen);
  return t;
}

Terminal::Terminal(int in_fd, int out_fd, const termios& saved)
    : in_fd_(in_fd), out_fd_(out_fd), saved_(saved) {}

Terminal::~Terminal() { Close(); }

void Terminal::Close() {
  if (!open_) return;
  open_ = false;
  WriteAll(out_fd_, kLeaveScreen);
  tcsetattr(in_fd_, TCSAFLUSH, &saved_);
  for (size_t i = 0; i < 3; ++i) sigaction(kStopSignals[i], &g_saved_actions[i], nullptr);
  sigaction(SIGWINCH, &g_saved_winch, nullptr);
  g_restore_on_crash.store(false);
  for (int signal : kFatalSignals) sigaction(signal, &g_saved_fatal[signal], nullptr);
  const int write_fd = g_signal_pipe_write.exchange(-1);
  close(write_fd);
  close(g_signal_pipe_read);
  g_signal_pipe_read = -1;
}

Terminal::Size Terminal::size() const {
  Size s;
  winsize ws{};
  if (ioctl(out_fd_, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 && ws.ws_row > 0) {
    s.width = ws.ws_col;
    s.height = ws.ws_row;
  }
  return s;
}

void Terminal::Draw(const Frame& frame) {
  std::string out = "\x1b[H";  // home; every line is rewritten and cleared to its end
  for (size_t i = 0; i < frame.lines.size(); ++i) {
    if (i > 0) out += "\r\n";
    const bool hl = static_cast<int>(i) == frame.highlight;
    if (hl) out += "\x1b[7m";
    out += frame.lines[i];
    out += "\x1b[K";
    if (hl) out += "\x1b[0m";
  }
  WriteAll(out_fd_, out);
}

Terminal::Input Terminal::ReadInput(absl::Duration timeout) {
  Input input;
  pollfd fds[2] = {{in_fd_, POLLIN, 0}, {g_signal_pipe_read, POLLIN, 0}};
  const int ms = static_cast<int>(absl::ToInt64Milliseconds(timeout));
  if (poll(fds, 2, ms) <= 0) return input;  // timeout, or EINTR (SIGWINCH)
  if (fds[1].revents & POLLIN) {
    unsigned char b = 0;
    if (read(g_signal_pipe_read, &b, 1) == 1) input.stop_signal = b;
  }
  if (fds[0].revents & (POLLIN | POLLHUP)) {
    char buf[256];
    const ssize_t n = read(in_fd_, buf, sizeof buf);
    if (n > 0) input.bytes.assign(buf, static_cast<size_t>(n));
    if (n <= 0 && (fds[0].revents & POLLHUP)) input.stop_signal = SIGHUP;  // the terminal went away
  }
  return input;
}

}  // namespace monitor
}  // namespace cyber
