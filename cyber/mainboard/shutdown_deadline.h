// Internal to this repository: not part of the API (docs/api.md lists the
// API headers); its Bazel target is visible only inside this repository.
//
// ShutdownDeadline: mainboard's bounded run (--run_for) and bounded shutdown
// (--shutdown_deadline), kept on the steady clock by a thread of its own.
//
// Why a thread of its own: what it bounds may be stuck anywhere else. A
// component's Clear() that stops a timer while holding a lock the timer's
// callback needs waits for ever (timer/timer.h); with every processor
// blocked, a --run_for kept by a Timer would never even fire. This thread
// needs nothing from the scheduler or the timer system: it requests the
// shutdown itself when the run is over (cyber::AsyncShutdown(), as SIGINT
// does), and when the shutdown has not finished `deadline` after it began,
// calls `on_expired`, which reports what is stuck and ends the process.
//
//   ShutdownDeadline bound({run_for, deadline, [] { Report(); _exit(3); }});
//   cyber::WaitForShutdown();   // a signal, or run_for elapsed
//   bound.ShutdownBegins();     // the deadline counts from here
//   launcher.Stop();
//   cyber::Shutdown();
//   bound.ShutdownFinished();   // (the destructor does too)
//
// Threads: one thread makes it and calls ShutdownBegins() and
// ShutdownFinished(); `on_expired` runs on the deadline's thread while that
// thread is still stuck (so it must not wait for it).

#ifndef CYBER_MAINBOARD_SHUTDOWN_DEADLINE_H_
#define CYBER_MAINBOARD_SHUTDOWN_DEADLINE_H_

#include <chrono>
#include <functional>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/time/time.h"
#include "cyber/common/mutex.h"

namespace cyber {

class ShutdownDeadline {
 public:
  struct Options {
    // After this long (from construction), cyber::AsyncShutdown(); zero or
    // InfiniteDuration(): only a signal (or the program) ends the run.
    absl::Duration run_for = absl::ZeroDuration();
    // From ShutdownBegins(); InfiniteDuration(): no bound.
    absl::Duration deadline = absl::Seconds(5);
    // Called at most once, on the deadline's thread, when the deadline
    // passes before ShutdownFinished().
    std::function<void()> on_expired;
  };

  explicit ShutdownDeadline(Options options);
  ~ShutdownDeadline();  // ShutdownFinished(), then joins its thread
  ShutdownDeadline(const ShutdownDeadline&) = delete;
  ShutdownDeadline& operator=(const ShutdownDeadline&) = delete;

  void ShutdownBegins();
  // If the deadline has just expired, waits while on_expired runs (which
  // normally ends the process).
  void ShutdownFinished();

 private:
  using SteadyClock = std::chrono::steady_clock;
  // kExpired: on_expired runs (decided under mu_, so a ShutdownFinished()
  // that comes at that moment waits for it instead of going on as if the
  // shutdown had finished in time: one outcome, never both).
  enum class Phase { kRunning, kShuttingDown, kExpired, kFinished };
  void Watch();

  const Options options_;
  const SteadyClock::time_point started_;
  Mutex mu_;
  CondVar cv_;
  Phase phase_ ABSL_GUARDED_BY(mu_) = Phase::kRunning;
  SteadyClock::time_point shutdown_began_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;  // last: starts once the rest is set
};

}  // namespace cyber

#endif  // CYBER_MAINBOARD_SHUTDOWN_DEADLINE_H_
