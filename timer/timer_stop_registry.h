// Internal to this repository: not part of the API (docs/api.md lists the
// API headers); its Bazel target is visible only inside this repository.
//
// Stops in progress: every Timer::Stop() (also from the destructor or
// Configure()) that waits for its timer's running callback is listed here
// while it waits, so that a stuck one is loud instead of silent.
//
// Why: Stop() is synchronous (timer.h): it waits for the call in flight.
// Called while holding a lock that the callback needs, it waits for ever,
// and nothing says so — a robot process that does not exit, a graph test
// that hangs until Bazel kills it. Here a stop that has waited longer than
// --timer_stop_warn_after (default 1s, on the steady clock) is logged with
// AWARN, naming the timer, the caller and how long it has waited:
//
//   timer "planner_timeout": Stop() has waited 1.001s for its running
//   callback to return (caller: thread 4242 "mainboard", in component
//   "planner" Shutdown()); still waiting. If the caller holds a lock the
//   callback needs, it never will.
//
// and again at 2, 4, 8, ... times the threshold while it still waits. The
// same list serves shutdown reports (mainboard's --shutdown_deadline, a
// simulated graph's stuck run: StopsInProgress()).
//
// The caller is the waiting thread (Linux thread id and name) or routine
// (its name, cyber/time/wait_list.h Parkable::DebugName), followed by what
// a ScopedStopCaller on that thread or routine says it does (the launcher
// names the component it shuts down).
//
// Cost: nothing on the fire path. A Stop() that waits registers one record
// (its timer's name and the caller's identity, described only when a warning
// or a report asks) under one process-wide lock; one watcher thread, started
// by the first Stop() that waits (once it has released its timer's lock),
// sleeps on the steady clock until the earliest warning is due
// (indefinitely while no stop waits) and logs it. A process forked after
// the watcher started (a gtest death test) starts its own at its first
// waiting Stop(), and lists none of its parent's stops.
//
// Threads: everything here is thread-safe.

#ifndef TIMER_TIMER_STOP_REGISTRY_H_
#define TIMER_TIMER_STOP_REGISTRY_H_

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "gflags/gflags.h"

// How long a Stop() waits for its running callback before it is logged as
// stuck (an absl duration: "1s", "250ms"; "inf" never logs). Read when a
// Stop() begins to wait. Set with --timer_stop_warn_after=... or, in tests,
// FLAGS_timer_stop_warn_after (gflags::FlagSaver restores it).
DECLARE_string(timer_stop_warn_after);

namespace cyber {
class Parkable;

namespace timer {
namespace timer_internal {
class StopRegistry;
}  // namespace timer_internal

// One Stop() waiting for a running callback now.
struct StopInProgress {
  std::string timer;      // the timer's name
  std::string caller;     // e.g. thread 4242 "mainboard", in component "planner" Shutdown()
  absl::Duration waited;  // so far, on the steady clock
};

// Every Stop() waiting now, the longest waiting first.
std::vector<StopInProgress> StopsInProgress();

// One line: timer "t": Stop() waiting 1.2s for its running callback;
// caller: <caller>
std::string ToString(const StopInProgress& stop);

// --timer_stop_warn_after, parsed (InfiniteDuration: never). A value that is
// not a positive duration is refused when the flag is set from the command
// line; one assigned directly to FLAGS_timer_stop_warn_after that does not
// parse counts as the 1 s default.
absl::Duration StopWarnAfter();

// Says what the calling thread or routine does, for the caller of any
// Stop() that waits while this object lives: "component \"planner\"
// Shutdown()". Nests (the innermost is named). A routine may suspend while
// one lives: it is recorded by execution (CurrentExecutionId()), not in a
// thread-local. Destroy it on the execution that made it.
class ScopedStopCaller {
 public:
  explicit ScopedStopCaller(std::string what);
  ~ScopedStopCaller();
  ScopedStopCaller(const ScopedStopCaller&) = delete;
  ScopedStopCaller& operator=(const ScopedStopCaller&) = delete;

 private:
  friend class timer_internal::StopRegistry;
  const void* const execution_;
  const std::string what_;
  // The registry's list of callers (its lock guards the links).
  ScopedStopCaller* prev_ = nullptr;
  ScopedStopCaller* next_ = nullptr;
};

namespace timer_internal {

// Lists one waiting Stop() for as long as it lives; made by TimerCore::Stop()
// on its own stack right before it waits, destroyed right after.
class StopWaitRecord {
 public:
  explicit StopWaitRecord(std::string timer_name);
  ~StopWaitRecord();
  StopWaitRecord(const StopWaitRecord&) = delete;
  StopWaitRecord& operator=(const StopWaitRecord&) = delete;

  // True for the process's first waiting stop with a warning to give: it
  // must then call StartWatcher(), holding no lock (a thread is not started
  // under a timer's lock).
  bool must_start_watcher() const { return must_start_watcher_; }
  static void StartWatcher();

 private:
  friend class StopRegistry;
  const std::string timer_;
  // Who waits, described only when needed (the waiter outlives the record).
  const void* const execution_;
  Parkable* const coroutine_;  // null: a plain thread waits
  pid_t thread_id_ = 0;        // a thread's Linux id and name
  char thread_name_[16] = {};
  const std::chrono::steady_clock::time_point since_;
  bool must_start_watcher_ = false;  // set by the constructor only
  // The registry's lock guards the following.
  std::chrono::steady_clock::time_point next_warning_;
  bool warned_ = false;
  StopWaitRecord* prev_ = nullptr;
  StopWaitRecord* next_ = nullptr;
};

}  // namespace timer_internal
}  // namespace timer
}  // namespace cyber

#endif  // TIMER_TIMER_STOP_REGISTRY_H_
