// TerminalKeys: single key presses from the terminal on stdin, for the
// programs that take keys while they run (cyber_recorder play: pause, step;
// cyber_launch on lockstep time: pause, step). While it exists the terminal
// is in non-canonical mode without echo, so a key arrives without Enter and
// is not printed; the destructor restores the terminal as it was.
//
// When stdin is not a terminal (a pipe, a test, CI), or the process runs in
// the background of a shell (the terminal belongs to another process
// group), active() is false, the terminal is left alone, and Read() only
// waits; so it is after the terminal hangs up.
//
// Threads: one reader at a time; construct and destroy on the same thread
// as the program's other terminal settings.

#ifndef CYBER_COMMON_TERMINAL_KEYS_H_
#define CYBER_COMMON_TERMINAL_KEYS_H_

#include <termios.h>

#include "absl/time/time.h"

namespace cyber {

class TerminalKeys {
 public:
  TerminalKeys();
  ~TerminalKeys();
  TerminalKeys(const TerminalKeys&) = delete;
  TerminalKeys& operator=(const TerminalKeys&) = delete;

  bool active() const { return active_; }
  // A key typed within `timeout`, or 0 (none, or not a terminal: then it
  // sleeps for `timeout`).
  char Read(absl::Duration timeout);

 private:
  termios saved_{};
  bool active_ = false;
};

}  // namespace cyber

#endif  // CYBER_COMMON_TERMINAL_KEYS_H_
