// SteadyClock: the production Clock, on CLOCK_MONOTONIC.
//
// Sleeps are absolute (clock_nanosleep with TIMER_ABSTIME, or a condition
// variable bound to CLOCK_MONOTONIC), so a late wake-up never shifts later
// deadlines and setting the wall clock changes nothing. Its epoch is the
// kernel's CLOCK_MONOTONIC epoch, which std::chrono::steady_clock shares.
//
// Stateless; one shared instance is enough (SteadyClock::Get()), but any
// number may be created. Thread-safe.

#ifndef CYBER_TIME_STEADY_CLOCK_H_
#define CYBER_TIME_STEADY_CLOCK_H_

#include <chrono>

#include "cyber/time/clock.h"

namespace cyber {

class SteadyClock final : public Clock {
 public:
  // A process-wide instance. It holds no state, so sharing it hides nothing.
  static SteadyClock* Get();

  Instant Now() const override;
  void SleepUntil(Instant deadline) override;
  WakeReason WaitUntil(Instant deadline, WakeupEvent* wakeup) override;
  std::optional<std::chrono::steady_clock::time_point> ToSteadyTime(
      Instant t) const override {
    return ToTimePoint(t);
  }

  // The same instant as a std::chrono::steady_clock time point.
  static std::chrono::steady_clock::time_point ToTimePoint(Instant t);
};

}  // namespace cyber

#endif  // CYBER_TIME_STEADY_CLOCK_H_
