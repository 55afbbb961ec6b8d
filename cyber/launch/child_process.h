// SpawnChild: starts one supervised process — stdout and stderr appended
// to its log file, stdin /dev/null, in a process group of its own, and tied
// to the launcher's life.
//
// Why a process group of its own: Ctrl-C in a terminal signals the whole
// foreground group; the children must not get that SIGINT too, because the
// launcher stops them in order (and mainboard exits without its summary on
// a second SIGINT). The launcher sends each its one signal.
//
// Why PR_SET_PDEATHSIG(SIGKILL): when the launcher dies without stopping
// its children (kill -9, a crash), the kernel kills them, so nothing is
// left behind. SIGKILL rather than SIGTERM because no one is left to
// escalate if a child ignored SIGTERM or hung in its shutdown; the price:
// such a child leaves its Fast-DDS files in /dev/shm (cyber/tools/shm_clean
// removes them). The signal fires when the *thread* that forked exits, not
// the process: call SpawnChild from a thread that lives as long as the
// children (the supervisor's Run() thread).
//
// Descriptors: the child gets stdin (/dev/null), stdout and stderr (the
// log) and nothing else of the launcher's (its DDS sockets and files).
//
// Signals: the child starts with every signal at its default (a launcher
// started in the background by a shell has SIGINT ignored, which exec
// would otherwise hand down) and none blocked, except with
// `stop_signals_wait_for_init`: SIGINT and SIGTERM start blocked, for a
// program that unblocks them once it can stop in order (cyber::Init does,
// cyber/init/init.cc): a stop during its start-up then waits for that
// instead of killing it before it can print its summary.
//
// The child is fork()ed from a possibly multi-threaded process: between
// fork and exec it only calls async-signal-safe functions.

#ifndef CYBER_LAUNCH_CHILD_PROCESS_H_
#define CYBER_LAUNCH_CHILD_PROCESS_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace cyber {
namespace launch {

struct SpawnedChild {
  pid_t pid = -1;
  // A pidfd (poll()s readable when the child exits); -1 if the kernel has
  // none. The caller closes it.
  int pidfd = -1;
};

// Starts argv[0] (looked up on PATH if it has no '/') with `argv`, output
// appended to `log_path` (created 0644 if missing). Errors name the
// program: FailedPrecondition when it cannot be executed (with errno's
// words), Internal when fork fails, and the log path when it cannot be
// opened.
absl::StatusOr<SpawnedChild> SpawnChild(const std::vector<std::string>& argv,
                                        const std::string& log_path,
                                        bool stop_signals_wait_for_init = false);

// "exit 0", "exit 3", "signal 9 (KILL)", "signal 11 (SEGV), core dumped".
std::string DescribeWaitStatus(int wait_status);

// True for a clean exit (status 0).
bool CleanExit(int wait_status);

}  // namespace launch
}  // namespace cyber

#endif  // CYBER_LAUNCH_CHILD_PROCESS_H_
