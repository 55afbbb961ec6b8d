// SteadyTimeSimulatedClock: a SimulatedClock that claims its instants are
// real steady time (instant t is std::chrono::steady_clock's epoch + t).
//
// Why: a timer system announces its plan (Dispatcher::ExpectWork) and
// hands work over early only on a clock that is real steady time; a plain
// SimulatedClock makes no such claim. With this clock a test drives a
// thread-free timer system event by event and still sees announcements
// and early hand-overs at instants it picks (started at the real present,
// those instants are real ones a scheduler can wait for).
//
// Threads: as SimulatedClock.

#ifndef TIMER_TESTING_STEADY_TIME_SIMULATED_CLOCK_H_
#define TIMER_TESTING_STEADY_TIME_SIMULATED_CLOCK_H_

#include <chrono>
#include <optional>

#include "cyber/time/clock.h"
#include "cyber/time/simulated_clock.h"
#include "cyber/time/steady_clock.h"

namespace cyber {
namespace timer {

class SteadyTimeSimulatedClock final : public Clock {
 public:
  using SteadyTime = std::chrono::steady_clock::time_point;

  explicit SteadyTimeSimulatedClock(Instant start) : sim_(start) {}
  Instant Now() const override { return sim_.Now(); }
  void SleepUntil(Instant deadline) override { sim_.SleepUntil(deadline); }
  WakeReason WaitUntil(Instant deadline, WakeupEvent* wakeup) override {
    return sim_.WaitUntil(deadline, wakeup);
  }
  std::optional<SteadyTime> ToSteadyTime(Instant t) const override {
    return Steady(t);
  }
  // The steady time point instant `t` claims to be.
  static SteadyTime Steady(Instant t) { return SteadyClock::ToTimePoint(t); }
  void AdvanceTo(Instant t) { sim_.AdvanceTo(t); }
  SimulatedClock* sim() { return &sim_; }

 private:
  SimulatedClock sim_;
};

}  // namespace timer
}  // namespace cyber

#endif  // TIMER_TESTING_STEADY_TIME_SIMULATED_CLOCK_H_
