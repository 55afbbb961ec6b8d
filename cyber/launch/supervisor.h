// Supervisor: runs the processes of a LaunchPlan until they end or a stop
// is requested — starts each when its readiness conditions hold, respawns
// or stops on an exit as the plan says, and stops everything with SIGINT,
// then SIGTERM, then SIGKILL.
//
// The rules, in one place:
//   start    processes are started in plan order, each as soon as its
//            start_after processes are up and its wait_for_writer channels
//            have a writer (Readiness); one that waits does not hold back
//            a later one without conditions. Waiting past ready_timeout
//            stops the launch (exit code 1): a graph that cannot come up
//            is an error, not a hang; so is waiting for a start_after
//            process that is down for good. Once no process waits,
//            Readiness::Done().
//   an exit  (not asked for by a stop) is a failure unless it is exit 0.
//            exception_handler respawn: started again respawn_delay later
//              if the exit qualifies (respawn_on failure: a failure;
//              always: any exit) and fewer than respawn_limit respawns were
//              made; else the limit is logged and it stays down.
//            Then, if it stays down: required → every process is stopped
//              (exit code 1 unless its exit was clean); exception_handler
//              exit and a failure → every process is stopped (exit code 1);
//              else the rest keep running.
//            When every process is down and none will be respawned, the
//            launch ends (exit code 0 if every last exit was clean).
//   stop     (RequestStop, or one of the above): SIGINT to every running
//            process in reverse start order; those still running
//            sigint_timeout later get SIGTERM, sigterm_timeout after that
//            SIGKILL. Run() returns once every child is reaped.
//
// Each process's output goes to <log_dir>/<process_name>.log, appended
// across respawns, each start preceded by a line "cyber_launch: start N of
// <name> at <time>: <command>".
//
// Waiting: the Run() loop sleeps in poll() on the children's pidfds and a
// wake pipe (RequestStop), until the next deadline (a respawn, a stop
// escalation) or kReadinessPoll while a process waits for readiness. No
// fixed sleep orders anything.
//
// Threads: Run() once, on a thread that outlives the children (they are
// killed by the kernel when the forking thread exits: child_process.h).
// RequestStop() from any thread or a signal handler. Snapshot() from any
// thread. The report callback runs on the Run() thread, without locks held.

#ifndef CYBER_LAUNCH_SUPERVISOR_H_
#define CYBER_LAUNCH_SUPERVISOR_H_

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/time/time.h"
#include "cyber/common/mutex.h"
#include "cyber/launch/launch_file.h"
#include "cyber/launch/readiness.h"

namespace cyber {
namespace launch {

// One process's state and history.
struct ProcessRecord {
  enum class State { kWaiting, kRunning, kRespawnPending, kDown };
  std::string name;
  State state = State::kWaiting;
  pid_t pid = 0;  // running now, else 0
  int starts = 0;
  int respawns = 0;
  int respawn_limit = 0;
  bool respawn_limit_reached = false;
  std::optional<int> last_wait_status;  // of its last exit
  // The stop signals its last run was sent: "INT", "INT, TERM",
  // "INT, TERM, KILL"; empty: none (it ended on its own).
  std::string stop_signals;
  // Instants since Run() began (steady clock), for ordering and delays.
  std::optional<absl::Duration> last_start;
  std::optional<absl::Duration> last_exit;
  std::string log_path;
  std::string failure;  // why it could not start, if it could not
};

struct LaunchOutcome {
  int exit_code = 0;
  std::string reason;  // why the launch ended, one line
  std::vector<ProcessRecord> processes;  // plan order
};

class Supervisor {
 public:
  using CommandFn = std::function<std::vector<std::string>(const ProcessPlan&)>;
  struct Options {
    CommandFn command;        // the argv of a process (required)
    std::string log_dir;      // exists (required)
    // The processes unblock SIGINT and SIGTERM themselves once they can
    // stop in order (mainboard: in cyber::Init); see SpawnChild.
    bool stop_signals_wait_for_init = false;
    absl::Duration sigint_timeout = absl::Seconds(10);
    absl::Duration sigterm_timeout = absl::Seconds(5);
    // Required when a process has start_after or wait_for_writer.
    Readiness* readiness = nullptr;
    // Event lines ("cyber_launch: ..."); default: stderr.
    std::function<void(const std::string&)> report;
  };

  Supervisor(LaunchPlan plan, Options options);
  ~Supervisor();
  Supervisor(const Supervisor&) = delete;
  Supervisor& operator=(const Supervisor&) = delete;

  // Runs the launch to its end (see the rules above).
  LaunchOutcome Run();
  // Starts the stop; async-signal-safe. Before Run(), Run() stops at once.
  void RequestStop();
  // The processes now, plan order.
  std::vector<ProcessRecord> Snapshot() const;

 private:
  using SteadyTime = std::chrono::steady_clock::time_point;
  struct Process;

  void Report(const std::string& line);
  absl::Duration SinceStart() const;
  bool ConditionsHold(const Process& p);
  std::string Pending(const Process& p);
  std::string DownForGood(const Process& p) const;
  void Start(Process& p);
  void Reap();
  void OnExit(Process& p, int wait_status);
  void BeginStop(const std::string& reason, int exit_code);
  void Escalate();
  void WaitForEvent(SteadyTime next_deadline, bool poll_readiness);
  void Publish(const Process& p);

  const LaunchPlan plan_;
  const Options options_;
  std::vector<Process> processes_;  // plan order; the Run() thread's only
  std::vector<size_t> start_order_;  // indices, first starts
  SteadyTime run_start_;
  // The stop, once begun.
  bool readiness_done_ = false;  // Readiness::Done() was called
  bool stopping_ = false;
  SteadyTime stop_began_;
  int stop_stage_ = 0;  // 1 SIGINT sent, 2 SIGTERM, 3 SIGKILL
  std::string end_reason_;
  int exit_code_ = 0;

  std::atomic<bool> stop_requested_{false};
  int wake_read_ = -1;
  int wake_write_ = -1;

  mutable Mutex mu_;
  // mu_ protects the copy that Snapshot() reads.
  std::vector<ProcessRecord> published_ ABSL_GUARDED_BY(mu_);
};

}  // namespace launch
}  // namespace cyber

#endif  // CYBER_LAUNCH_SUPERVISOR_H_
