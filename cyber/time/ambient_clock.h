// Internal to this repository: not part of the API (docs/api.md lists the
// API headers); its Bazel target is visible only inside this repository.
//
// AmbientClock: the clock that "now" means for the code running on this
// thread right now, when that is not the process's real time.
//
// Why: a graph of components may run on a simulated clock (tests, replays,
// `mainboard --clock=simulated`). Component code does not pass clocks
// around: it calls cyber::Time::Now(), builds a cyber::Rate, sleeps with
// cyber::Duration::Sleep. Those must follow the graph's clock, or a
// simulated run silently mixes in real time. The clock is the `clock` field
// of the runtime scope installed on this thread (cyber/runtime/
// runtime_scope.h: the one lookup rule, installed by a scheduler around its
// routines, by the launcher around components' Init()/Clear(), by a
// simulated graph around the code it drives). Code outside any runtime's
// code sees no ambient clock and keeps the process's real clocks.
//
// The trade-off: a thread a component starts itself (std::thread) carries no
// ambient clock; such code should use the scheduler (cyber::Async,
// CreateTask), which does.
//
// Threads: per thread, like the runtime scope.

#ifndef CYBER_TIME_AMBIENT_CLOCK_H_
#define CYBER_TIME_AMBIENT_CLOCK_H_

#include "cyber/runtime/runtime_scope.h"
#include "cyber/time/clock.h"

namespace cyber {

// The clock of the runtime scope installed on this thread, or null outside
// any runtime's code (or when its scope names none).
Clock* AmbientClock();

// The ambient clock if there is one, else `fallback`.
inline Clock* AmbientClockOr(Clock* fallback) {
  Clock* const c = AmbientClock();
  return c != nullptr ? c : fallback;
}

// Marks this thread as the one that moves `clock` forward (a simulated
// graph's driving thread) until destroyed. A blocking sleep on `clock` from
// this thread could never end; SleepOnClock (cyber/time/sleep_on_clock.h)
// refuses it instead of hanging: it logs an error and returns at once.
class ScopedClockDriver {
 public:
  explicit ScopedClockDriver(const Clock* clock);
  ~ScopedClockDriver();
  ScopedClockDriver(const ScopedClockDriver&) = delete;
  ScopedClockDriver& operator=(const ScopedClockDriver&) = delete;

 private:
  const Clock* const previous_;
};

// Whether this thread is the one that moves `clock` (see above).
bool DrivesClock(const Clock* clock);

}  // namespace cyber

#endif  // CYBER_TIME_AMBIENT_CLOCK_H_
