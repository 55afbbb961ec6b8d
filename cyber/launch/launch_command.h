// What `cyber_launch start|stop` does, for its thin main
// (cyber/tools/cyber_launch): the pieces of this library put together —
// parse the launch file, claim its pid file, make the log directory, join
// the DDS domain when a process waits for readiness, run the supervisor
// until its end or SIGINT/SIGTERM/SIGHUP, print the summary.
//
// Each process runs `MAINBOARD --process_name=NAME -d a.dag -d b.dag`.
//
// Output: event lines and errors on stderr ("cyber_launch: ..."), the
// start line (log directory, domain) and the summary on stdout.
//
// RunStart installs signal handlers for SIGINT, SIGTERM and SIGHUP (the
// process's, for its whole run): call it from main's thread.

#ifndef CYBER_LAUNCH_LAUNCH_COMMAND_H_
#define CYBER_LAUNCH_LAUNCH_COMMAND_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cyber/launch/launch_file.h"

namespace cyber {
namespace launch {

struct StartOptions {
  std::string launch_file;
  // The mainboard binary; empty: FindMainboard's default.
  std::string mainboard;
  // Where the per-process logs go; empty: a fresh directory
  // $TMPDIR/cyber_launch.XXXXXX (printed at start).
  std::string log_dir;
  absl::Duration sigint_timeout = absl::Seconds(10);
  absl::Duration sigterm_timeout = absl::Seconds(5);
};

// The mainboard to run: `flag` if given (it must be an executable file);
// else "mainboard" beside `self` (the programs on PATH, tools/ script),
// else bazel-bin's cyber/mainboard/mainboard seen from bazel-bin's
// cyber/tools/cyber_launch/, else "mainboard" on PATH. NotFound listing
// the places looked in.
absl::StatusOr<std::string> FindMainboard(const std::string& flag, const std::string& self);

// The argv of a process.
std::vector<std::string> MainboardCommand(const std::string& mainboard, const ProcessPlan& process);

// `cyber_launch start FILE`: the program's exit code (0: stopped on
// request or every process ended cleanly; 1: a failure the summary names;
// 2: the launch could not begin, with the error on stderr).
int RunStart(const StartOptions& options);

// `cyber_launch stop [FILE]`: signals the cyber_launch running FILE (all
// of this user's without FILE) and waits up to `wait` for it to end.
// Exit code 0, or 1 with the error on stderr.
int RunStop(const std::string& launch_file, absl::Duration wait);

}  // namespace launch
}  // namespace cyber

#endif  // CYBER_LAUNCH_LAUNCH_COMMAND_H_
