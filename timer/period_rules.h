// The rule for a timer's period (or a oneshot's delay): what every layer
// that takes one accepts, and how it words a refusal.
//
// Why one function: a period reaches the wheel through several doors — a
// Timer's options, a graph file's timer component `interval`, a
// TimerComponent — and each used to check it itself, with its own limits
// (the graph loader stopped at 24 h while the wheel reaches ~99 days) and
// its own words. A graph then refused what a Timer accepted, or said it
// differently. Here the limits come from the wheel (timer/timing_wheel.h:
// one tick at least, kMaxDelayTicks ticks at most), and each caller only
// says who it is and what the field is called:
//
//   CheckPeriod("timer \"imu_poll\"", "period", absl::Milliseconds(1),
//               kTimerResolution, MaxDelay(kTimerResolution))
//   // InvalidArgument: timer "imu_poll": period 1ms is below the 2ms resolution
//
// A caller that adds context (the graph loader's "file:line:col: ") puts it
// in front of the message; the rest stays the same.
//
// What this does not decide: a oneshot's delay below one tick is refused
// here as a period is (the Timer's rule today, owned by its own issue).
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

// The longest delay (and period) a wheel whose tick is `tick` accepts:
// kMaxDelayTicks ticks (~99.4 days at 2 ms). TimingWheel::max_delay() is
// this for its tick.
inline absl::Duration MaxDelay(absl::Duration tick) {
  return tick * static_cast<int64_t>(kMaxDelayTicks);
}

// Whether CheckPeriod would accept `period`: the check alone, for hot
// paths (a timer binding at its first Schedule()) that build the message
// only when it fails.
inline bool PeriodInRange(absl::Duration period, absl::Duration resolution,
                          absl::Duration max) {
  return period > absl::ZeroDuration() && period >= resolution && period <= max;
}

// OK if `period` is within [resolution, max]. Otherwise an error whose
// message is "<subject>: <field> <period> <why>", e.g.
//   timer "imu": period 0 must be positive (the minimum is the 2ms resolution)
//   timer "imu": period 1ms is below the 2ms resolution
//   timer "imu": period 2386h5m34.594s exceeds the maximum 2386h5m34.592s
// InvalidArgument for the first two, OutOfRange for the last.
// `subject` names the object (`timer "imu"`, `timer component "imu"`);
// `field` is what the caller calls the value ("period", "delay",
// "interval").
absl::Status CheckPeriod(absl::string_view subject, absl::string_view field,
                         absl::Duration period, absl::Duration resolution,
                         absl::Duration max);

}  // namespace timer
}  // namespace cyber

#endif  // TIMER_PERIOD_RULES_H_
