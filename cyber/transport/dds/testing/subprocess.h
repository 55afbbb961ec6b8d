// Subprocess: a child process for cross-process tests, with its stdin and
// stdout on pipes. The destructor closes the child's stdin (the peers'
// signal to exit cleanly), waits up to 10 s, then kills (SIGKILL) and reaps
// a child still running, so a failed assertion never leaves a process
// behind.
//
// Not thread-safe: one test thread drives it.

#ifndef CYBER_TRANSPORT_DDS_TESTING_SUBPROCESS_H_
#define CYBER_TRANSPORT_DDS_TESTING_SUBPROCESS_H_

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"

namespace cyber {
namespace dds_test {

class Subprocess {
 public:
  // Starts `argv[0]` with `argv`. Aborts the test binary if fork fails.
  explicit Subprocess(const std::vector<std::string>& argv);
  ~Subprocess();
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  pid_t pid() const { return pid_; }
  // The next line of the child's stdout, without the newline; nullopt on
  // EOF or after `timeout`.
  std::optional<std::string> ReadLine(absl::Duration timeout);
  // Reads lines until one starts with `prefix`; returns it (nullopt on EOF
  // or timeout).
  std::optional<std::string> WaitForLine(const std::string& prefix, absl::Duration timeout);
  // Writes `line` and a newline to the child's stdin; false if it could not
  // (stdin closed, the child gone).
  bool WriteLine(const std::string& line);
  // Asks the child to exit (closes its stdin).
  void CloseStdin();
  void Kill(int signal);
  // The child's wait status, or nullopt if it has not exited by `timeout`;
  // once reaped, the same status at once.
  std::optional<int> Wait(absl::Duration timeout);

 private:
  pid_t pid_ = -1;
  int stdin_fd_ = -1;
  int stdout_fd_ = -1;
  bool reaped_ = false;
  int wait_status_ = 0;  // once reaped_
  std::string buffer_;
};

// The path of a binary of this workspace in the test's runfiles, e.g.
// "cyber/transport/dds/testing/dds_test_peer".
std::string RunfilePath(const std::string& workspace_relative);

}  // namespace dds_test
}  // namespace cyber

#endif  // CYBER_TRANSPORT_DDS_TESTING_SUBPROCESS_H_
