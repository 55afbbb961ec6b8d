// The rule for a timer's period: what every layer that takes one accepts,
// and how it words a refusal.
//
// Why one function: a period reaches the wheel through several doors — a
// Timer's options, a graph file's timer component `interval`, a
// TimerComponent — and each used to check it itself, with its own limits
// and its own words. A graph then refused what a Timer accepted, or said it
// differently. Here there is one rule, and each caller only says who it is
// and what the field is called:
//
//   CheckPeriod("timer \"imu_poll\"", "period", absl::ZeroDuration())
//   // InvalidArgument: timer "imu_poll": period 0 must be positive
//
// The rule: a periodic timer's period must be positive; that is all.
//   * Below the tick (1 ms, 500 us) is served exactly: each call is armed
//     for origin + k * period itself (TimingWheel::ArmExact), not rounded to
//     a tick.
//   * Beyond the wheel's range (MaxDelay(), ~99.4 days at 2 ms, or
//     InfiniteDuration) means "never": the timer stays armed and
//     cancellable and never fires.
//   * A oneshot's delay is not checked at all: <= 0 runs at once (late),
//     beyond the range is "never".
// A caller that adds context (the graph loader's "file:line:col: ") puts it
// in front of the message; the rest stays the same.
//
// Threads: pure functions.

#ifndef TIMER_PERIOD_RULES_H_
#define TIMER_PERIOD_RULES_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "timer/timing_wheel.h"

namespace cyber {
namespace timer {

// The longest delay a wheel whose tick is `tick` arms (kMaxDelayTicks
// ticks, ~99.4 days at 2 ms; TimingWheel::max_delay() is this for its
// tick). A timer's delay or period beyond it means "never".
inline absl::Duration MaxDelay(absl::Duration tick) {
  return tick * static_cast<int64_t>(kMaxDelayTicks);
}

// Whether CheckPeriod would accept `period`: the check alone, for hot
// paths (a timer binding at its first Schedule()) that build the message
// only when it fails.
inline bool PeriodInRange(absl::Duration period) {
  return period > absl::ZeroDuration();
}

// OK if `period` is positive. Otherwise InvalidArgument with the message
// "<subject>: <field> <period> must be positive", e.g.
//   timer "imu": period -5ms must be positive
// `subject` names the object (`timer "imu"`, `timer component "imu"`);
// `field` is what the caller calls the value ("period", "interval").
absl::Status CheckPeriod(absl::string_view subject, absl::string_view field,
                         absl::Duration period);

}  // namespace timer
}  // namespace cyber

#endif  // TIMER_PERIOD_RULES_H_
