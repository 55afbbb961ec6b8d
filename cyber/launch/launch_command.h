// What `cyber_launch start|stop` does, for its thin main
// (cyber/tools/cyber_launch): the pieces of this library put together —
// parse the launch file, claim its pid file, make the log directory, join
// the DDS domain when a process waits for readiness, run the supervisor
// until its end or SIGINT/SIGTERM/SIGHUP, print the summary.
//
// Each process runs `MAINBOARD --process_name=NAME -d a.dag -d b.dag`.
//
// With clock "simulated" the processes share one simulated time: each
// mainboard runs with --clock=simulated --lockstep, and this process is
// their lockstep coordinator (cyber/lockstep: it waits for every process
// of the file, grants one instant after another to `run_for`, names a
// process that is lost or late). Nothing is respawned (a restarted process
// could not rejoin the run), start_after and wait_for_writer are left to
// the lockstep join (nothing runs before the first instant), and the exit
// code is 1 when the run failed.
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
  // "steady" (the real clock) or "simulated" (lockstep, see above).
  std::string clock = "steady";
  // Simulated: the simulated time to run (required), at most `speed`
  // times real time (0: as fast as the processes go), and the real time a
  // process may take to join and for one instant.
  absl::Duration run_for = absl::ZeroDuration();
  double speed = 0;
  absl::Duration join_deadline = absl::Seconds(60);
  absl::Duration step_deadline = absl::Seconds(10);
  // Simulated: hold the first grant until a key says so. From a terminal,
  // a simulated run takes keys: space pauses and resumes, s lets one step
  // out while paused (CoordinatorDriver::Pause/Step).
  bool paused = false;
  // Simulated: a recording (MCAP) played into the run as one more process,
  // "recording", which sends the messages of `recording_channels` at their
  // recorded instants (lockstep::RecordingMember). Empty: none.
  std::string recording;
  std::vector<std::string> recording_channels;
};

// The mainboard to run: `flag` if given (it must be an executable file);
// else "mainboard" beside `self` (the programs on PATH, tools/ script),
// else bazel-bin's cyber/mainboard/mainboard seen from bazel-bin's
// cyber/tools/cyber_launch/, else "mainboard" on PATH. NotFound listing
// the places looked in.
absl::StatusOr<std::string> FindMainboard(const std::string& flag, const std::string& self);

// The argv of a process (with --clock=simulated --lockstep when
// `lockstep`).
std::vector<std::string> MainboardCommand(const std::string& mainboard, const ProcessPlan& process,
                                          bool lockstep = false);

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
