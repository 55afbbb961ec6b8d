// SimulatedTimerSystem: a complete timer system (tick thread, wheel,
// dispatcher) on a SimulatedClock, advanced event by event.
//
// Why: timer tests must be exact and must not sleep. Here there is no tick
// thread at all: RunUntil() steps the driver (TimerSystem::Step, the very
// code the tick thread runs) on the calling thread, callbacks run inline
// (InlineDispatcher), and time jumps from one planned event to the next, so
// a callback due at T observes Now() == T's tick instant exactly. A callback may
// "take time" by advancing the clock itself (clock().Advance(d)).
//
//   SimulatedTimerSystem sim;
//   TimerOptions o;
//   o.name = "t";
//   o.period = absl::Milliseconds(10);
//   o.callback = [] {};
//   Timer t(o, &sim.driver());
//   ASSERT_TRUE(t.Schedule().ok());
//   sim.RunFor(absl::Seconds(1));  // 100 calls, each at its exact tick
//
// Threads: drive it from one thread (the test); timers may be used from the
// callbacks as usual. Everything runs on that thread.

#ifndef TIMER_TESTING_SIMULATED_TIMER_SYSTEM_H_
#define TIMER_TESTING_SIMULATED_TIMER_SYSTEM_H_

#include <algorithm>

#include "cyber/time/simulated_clock.h"
#include "timer/dispatcher.h"
#include "timer/timer_system.h"

namespace cyber {
namespace timer {

class SimulatedTimerSystem {
 public:
  explicit SimulatedTimerSystem(Instant start = Instant() + absl::Hours(1),
                                absl::Duration tick = kTimerResolution)
      : clock_(start), driver_(&clock_, &dispatcher_, Options(tick)) {}

  SimulatedClock& clock() { return clock_; }
  TimerSystem& driver() { return driver_; }
  Instant Now() const { return clock_.Now(); }

  // Runs every expiry due up to and including `t`, in order, then sets the
  // clock to `t`.
  void RunUntil(Instant t) {
    while (true) {
      const Instant next = driver_.Step(clock_.Now());
      if (next > t) break;
      clock_.AdvanceTo(std::max(next, clock_.Now()));
    }
    if (t > clock_.Now()) clock_.AdvanceTo(t);
    driver_.Step(clock_.Now());
  }
  void RunFor(absl::Duration d) { RunUntil(clock_.Now() + d); }

 private:
  static TimerSystem::Options Options(absl::Duration tick) {
    TimerSystem::Options o;
    o.tick = tick;
    o.name = "sim-tick";
    o.run_thread = false;
    return o;
  }

  SimulatedClock clock_;
  InlineDispatcher dispatcher_;
  TimerSystem driver_;
};

}  // namespace timer
}  // namespace cyber

#endif  // TIMER_TESTING_SIMULATED_TIMER_SYSTEM_H_
