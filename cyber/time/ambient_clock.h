// AmbientClock: the clock that "now" means for the code running on this
// thread right now, when that is not the process's real time.
//
// Why: a graph of components may run on a simulated clock (tests, replays,
// `mainboard --clock=simulated`). Component code does not pass clocks
// around: it calls cyber::Time::Now(), builds a cyber::Rate, sleeps with
// cyber::Duration::Sleep. Those must follow the graph's clock, or a
// simulated run silently mixes in real time. So whoever runs a graph's code
// installs the graph's clock for the duration of that code: the scheduler
// while it resumes one of its routines (timer callbacks, reader callbacks,
// tasks), the launcher while a component's Init(), Clear() and shutdown run.
// Code outside any graph sees no ambient clock and keeps the process's real
// clocks.
//
// The trade-off: a thread a component starts itself (std::thread) carries no
// ambient clock; such code should use the scheduler (cyber::Async,
// CreateTask), which does.
//
// Threads: the ambient clock is per thread (a routine that moves between
// processor threads finds it set on each, by the scheduler). A
// ScopedAmbientClock is used on the thread that made it, and nests.

#ifndef CYBER_TIME_AMBIENT_CLOCK_H_
#define CYBER_TIME_AMBIENT_CLOCK_H_

#include "cyber/time/clock.h"

namespace cyber {

// This thread's ambient clock, or null outside any graph's code.
Clock* AmbientClock();

namespace ambient_internal {
// The variable behind AmbientClock() and ScopedAmbientClock, for code that
// runs on its thread's own stack and never across a coroutine switch (a
// processor resuming a routine: CRoutine::Resume), where an inline access
// is safe and saves out-of-line calls. Everybody else uses the functions,
// which are out of line so that code in a routine that moved threads reads
// its new thread's value.
inline thread_local Clock* t_ambient_clock = nullptr;
}  // namespace ambient_internal

// The ambient clock if there is one, else `fallback`.
inline Clock* AmbientClockOr(Clock* fallback) {
  Clock* const c = AmbientClock();
  return c != nullptr ? c : fallback;
}

// Installs `clock` (null: none) as this thread's ambient clock until the
// object is destroyed; then the previous one is back.
class ScopedAmbientClock {
 public:
  explicit ScopedAmbientClock(Clock* clock);
  ~ScopedAmbientClock();
  ScopedAmbientClock(const ScopedAmbientClock&) = delete;
  ScopedAmbientClock& operator=(const ScopedAmbientClock&) = delete;

 private:
  Clock* const previous_;
};

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
