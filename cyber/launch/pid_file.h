// Pid files: how `cyber_launch stop FILE.launch` finds the cyber_launch
// that runs FILE. `start` writes its pid to
//   $XDG_RUNTIME_DIR/cyber_launch/<launch file's name>-<hash of its real path>.pid
// (/tmp/cyber_launch-<uid>/ when XDG_RUNTIME_DIR is unset; its pid, then
// the launch file's real path, one a line) and removes it
// when it ends; `stop` sends that pid SIGINT — the same stop as Ctrl-C —
// and waits for it to exit. A pid file left by a killed launcher is
// recognised (its pid is gone or is not a cyber_launch) and replaced.
//
// Why a pid file rather than looking for the process by its command line
// (Cyber RT's `pkill -f`): the same file given by two relative paths is one
// launch, and another user's or another program's command line never
// matches.
//
// Not thread-safe against itself for one launch file (two `start`s of one
// file at the same instant may both claim it); any thread otherwise.

#ifndef CYBER_LAUNCH_PID_FILE_H_
#define CYBER_LAUNCH_PID_FILE_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace cyber {
namespace launch {

// The directory of the pid files (created 0700 when missing).
absl::StatusOr<std::string> PidFileDirectory();
// The pid file of `launch_file` (which must exist: its real path is hashed).
absl::StatusOr<std::string> PidFileFor(const std::string& launch_file);

// Writes this process's pid to `launch_file`'s pid file. AlreadyExists
// naming the file and the pid when a live cyber_launch holds it.
absl::StatusOr<std::string> ClaimPidFile(const std::string& launch_file);
// Removes `path` if it still holds this process's pid.
void ReleasePidFile(const std::string& path);

// True when `pid` runs a program named cyber_launch.
bool IsCyberLaunch(pid_t pid);

// Stops the cyber_launch of `launch_file` (SIGINT) and waits up to `wait`
// for it to exit. NotFound when none runs it (naming the pid file looked
// at); DeadlineExceeded naming the pid when it did not exit in time.
absl::Status StopLaunch(const std::string& launch_file, absl::Duration wait);
// Stops every cyber_launch with a pid file (`cyber_launch stop` without a
// file); the launch files stopped, or NotFound when none ran.
absl::StatusOr<std::vector<std::string>> StopAllLaunches(absl::Duration wait);

}  // namespace launch
}  // namespace cyber

#endif  // CYBER_LAUNCH_PID_FILE_H_
