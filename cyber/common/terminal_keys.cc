#include "cyber/common/terminal_keys.h"

#include <poll.h>
#include <unistd.h>

namespace cyber {

TerminalKeys::TerminalKeys() {
  if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &saved_) != 0) return;
  // In the background of a shell (`cmd &`) the terminal is not ours: a
  // tcsetattr() there would stop the process (SIGTTOU).
  if (tcgetpgrp(STDIN_FILENO) != getpgrp()) return;
  termios raw = saved_;
  raw.c_lflag &= ~(ICANON | ECHO);
  raw.c_cc[VMIN] = 0;
  raw.c_cc[VTIME] = 0;
  active_ = tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
}

TerminalKeys::~TerminalKeys() {
  if (active_) tcsetattr(STDIN_FILENO, TCSANOW, &saved_);
}

char TerminalKeys::Read(absl::Duration timeout) {
  const int ms = static_cast<int>(absl::ToInt64Milliseconds(timeout));
  if (!active_) {
    poll(nullptr, 0, ms);
    return 0;
  }
  pollfd p{STDIN_FILENO, POLLIN, 0};
  if (poll(&p, 1, ms) <= 0) return 0;
  char c = 0;
  if ((p.revents & POLLIN) != 0 && read(STDIN_FILENO, &c, 1) == 1) return c;
  // The terminal hung up (or the read failed): no key will come; restore
  // it and only wait from now on.
  tcsetattr(STDIN_FILENO, TCSANOW, &saved_);
  active_ = false;
  return 0;
}

}  // namespace cyber
