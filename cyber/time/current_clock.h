// Internal to this repository: not part of the API (docs/api.md lists the
// API headers); its Bazel target is visible only inside this repository.
//
// CurrentClock: the clock that "now" means for the code running on this
// thread right now.
//
// Why: a graph of components may run on a simulated clock (tests, replays,
// `mainboard --clock=simulated`). Component code does not pass clocks
// around: it calls cyber::Time::Now(), builds a cyber::Rate, sleeps with
// cyber::Duration::Sleep. Those must follow the graph's clock, or a
// simulated run silently mixes in real time. The clock is found by the one
// rule of cyber/common/runtime_scope.h: the clock of the runtime scope
// installed on this thread, else the process runtime's, which is always the
// steady clock — so code outside every runtime's scope reads the steady
// clock without making the process runtime.
//
// The trade-off: a thread a component starts itself (std::thread) carries no
// scope; such code should use the scheduler (cyber::Async, CreateTask),
// which does.
//
// Threads: per thread, like the runtime scope.

#ifndef CYBER_TIME_CURRENT_CLOCK_H_
#define CYBER_TIME_CURRENT_CLOCK_H_

#include "cyber/time/clock.h"

namespace cyber {

// The clock of the runtime the calling code belongs to; never null.
Clock* CurrentClock();

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

#endif  // CYBER_TIME_CURRENT_CLOCK_H_
