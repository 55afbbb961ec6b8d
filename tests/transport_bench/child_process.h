// ChildProcess: one process of a benchmark pair (this binary again, in
// another role), its stdin and stdout on pipes, its stderr shared with ours.
//
// Why a class of its own (cyber/transport/dds/testing/subprocess.h is the
// tests'): the orchestrator also talks to a running child (WriteLine: "go",
// "report ..."), and these binaries are not testonly.
//
// Leaving nothing behind: Finish() (and the destructor) closes the child's
// stdin, which every role takes as "exit cleanly" (it shuts its DDS
// participant down, which removes its shared-memory files), waits up to
// `grace`, then SIGKILLs and reaps it. A child started here ignores SIGINT,
// so a Ctrl-C reaches the orchestrator only; if the orchestrator dies, the
// children read EOF on stdin and exit by themselves.
//
// Not thread-safe: one thread drives it.

#ifndef TESTS_TRANSPORT_BENCH_CHILD_PROCESS_H_
#define TESTS_TRANSPORT_BENCH_CHILD_PROCESS_H_

#include <sys/types.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "tests/transport_bench/line_channel.h"

namespace cyber {
namespace transport_bench {

class ChildProcess {
 public:
  // Starts `argv[0]` with `argv`; Internal when pipe, fork or exec fails.
  static absl::StatusOr<std::unique_ptr<ChildProcess>> Start(
      const std::vector<std::string>& argv);
  ~ChildProcess();  // Finish(absl::Seconds(10))
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  // "sink ours 64 B (pid 1234)", for messages.
  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }

  LineReader& stdout_lines() { return lines_; }
  // The child's next line starting with `prefix`; other lines go to
  // `on_other` (if set) and are skipped. DeadlineExceeded naming the child
  // when it exits or `timeout` passes first; Internal with the child's text
  // for a line starting with "error".
  absl::StatusOr<std::string> ExpectLine(
      const std::string& prefix, absl::Duration timeout,
      const std::function<void(const std::string&)>& on_other = nullptr);
  // Writes `line` and a newline to the child's stdin; false if it is gone.
  bool WriteLine(const std::string& line);
  // Closes the child's stdin: every role's "exit cleanly".
  void CloseStdin();
  // Closes its stdin, waits up to `grace`, then kills (SIGKILL) and
  // reaps it. Returns its wait status, and whether it exited by itself.
  struct Exit {
    int status = 0;
    bool clean = false;  // exited by itself with status 0 within `grace`
    absl::Duration cpu;  // user + system time of its whole life (wait4)
  };
  Exit Finish(absl::Duration grace);

 private:
  ChildProcess(pid_t pid, int stdin_fd, int stdout_fd);

  const pid_t pid_;
  int stdin_fd_;
  const int stdout_fd_;
  LineReader lines_;
  std::optional<Exit> exit_;
  std::string name_;
};

// The path of the running binary (/proc/self/exe), to start it again in
// another role.
std::string SelfPath();

}  // namespace transport_bench
}  // namespace cyber

#endif  // TESTS_TRANSPORT_BENCH_CHILD_PROCESS_H_
