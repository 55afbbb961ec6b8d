// Terminal: the monitor's terminal, driven with termios raw mode and plain
// ANSI escape sequences (no ncurses: one dependency less, and the handful
// of sequences used here work in every terminal emulator and in tmux).
//
// Open() saves the terminal's settings, turns off echo and line editing
// (ISIG stays on, so Ctrl-C still raises SIGINT), switches to the
// alternate screen and hides the cursor. Close() (and the destructor)
// puts all of that back, so the user's shell and scrollback are as they
// were. SIGINT, SIGTERM and SIGHUP are caught while it is open: the
// handler only records the signal (a byte on a self-pipe), the loop sees
// it in ReadInput(), returns, and the terminal is restored on the normal
// path; the program then exits with 128 + the signal's number. SIGWINCH
// only wakes the loop, which asks the terminal's size at every frame. A
// crash (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT) restores the terminal
// in the signal handler, then dies of the signal as it would have.
//
// Threads: one thread uses a Terminal. One Terminal at a time per process
// (the signal handlers are the process's).

#ifndef CYBER_MONITOR_TERMINAL_H_
#define CYBER_MONITOR_TERMINAL_H_

#include <termios.h>

#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cyber/monitor/screen.h"

namespace cyber {
namespace monitor {

class Terminal {
 public:
  // FailedPrecondition when `in_fd` is not a terminal (run with --once
  // then).
  static absl::StatusOr<std::unique_ptr<Terminal>> Open(int in_fd, int out_fd);
  ~Terminal();  // Close()
  Terminal(const Terminal&) = delete;
  Terminal& operator=(const Terminal&) = delete;

  // Columns and rows now (80 x 24 if the terminal does not say).
  struct Size {
    int width = 80;
    int height = 24;
  };
  Size size() const;

  // Draws `frame` over the whole screen, its highlighted line in reverse
  // video.
  void Draw(const Frame& frame);

  // What came within `timeout`: the bytes typed (possibly none), or the
  // signal that asks the program to stop.
  struct Input {
    std::string bytes;
    std::optional<int> stop_signal;
  };
  Input ReadInput(absl::Duration timeout);

  // Restores the terminal and the signal handlers. Idempotent.
  void Close();

 private:
  Terminal(int in_fd, int out_fd, const termios& saved);

  const int in_fd_;
  const int out_fd_;
  const termios saved_;
  bool open_ = true;
};

}  // namespace monitor
}  // namespace cyber

#endif  // CYBER_MONITOR_TERMINAL_H_
