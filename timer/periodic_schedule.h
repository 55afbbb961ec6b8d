// Internal to this repository: not part of the API (docs/api.md lists the
// API headers); its Bazel target is visible only inside this repository.
//
// PeriodicSchedule: a periodic timer's phase-locked schedule, and what each
// overrun policy does after a late call, as a value. No lock, no thread, no
// clock: the timer's core (timer_core.cc) holds one under its lock and asks
// it what to arm next; tests drive it directly (periodic_schedule_test.cc).
//
// Why apart from the timer: the rules are arithmetic on instants and ticks,
// and they are where a timer's guarantees live (never drift, never two calls
// closer than half a period under kSkip, a stall ends in one late call). As
// a value they are tested exhaustively without threads, and a new overrun
// policy is one enum value (timer_options.h), one case in AfterRun() and one
// test.
//
// The schedule: call k (k = 1, 2, ...) is expected at origin + k * period.
// Phase lock is this formula: however late calls run, the k-th expected
// instant does not move, so drift cannot accumulate. Only kDelay re-bases
// (origin = the end of the late run).
//
// Exact: the timer arms call k for its expected instant itself
// (TimingWheel::ArmExact), whatever the period, so the schedule needs no
// tick arithmetic. After a run that ended at `end`, call k+1 is on time iff
// it is expected at or after `end`; the calls expected before `end` are
// missed and the policy decides. (A call armed for an instant already
// passed fires at the tick thread's next pass: "at once".)
//
// Threads: a value; the owner synchronizes.

#ifndef TIMER_PERIODIC_SCHEDULE_H_
#define TIMER_PERIODIC_SCHEDULE_H_

#include <cstdint>

#include "absl/time/time.h"
#include "cyber/time/instant.h"
#include "timer/timer_options.h"

namespace cyber {
namespace timer {

// What a schedule needs of a timer's configuration (TimerOptions' fields
// of the same names), kept inline in the timer: no options object per
// timer on the fire path.
struct ScheduleRules {
  absl::Duration period;
  OverrunPolicy overrun_policy = OverrunPolicy::kSkip;
  int max_burst = 3;
  bool oneshot = false;
  // A oneshot whose delay is its timer system's default timeout, read into
  // `period` at each start (TimerOptions::use_default_timeout).
  bool use_default_timeout = false;
};

class PeriodicSchedule {
 public:
  // What AfterRun() decided.
  struct Next {
    bool overrun = false;  // call k+1 could not fire on its own tick
    int64_t skipped = 0;   // periods skipped (counted as missed)
  };

  // A new schedule from `origin`: call 1 is expected one period after it.
  void Start(Instant origin) {
    origin_ = origin;
    k_ = 1;
  }

  // The call the schedule stands at (armed, queued or running).
  int64_t call() const { return k_; }
  Instant origin() const { return origin_; }
  Instant Expected(int64_t k, absl::Duration period) const {
    return origin_ + period * k;
  }
  // Moves on to the next call, on time.
  void Advance() { ++k_; }

  // kSkip only (else 0): if periods after the current call are due by
  // `due_by` (a tick instant), the current call stands for the latest of
  // them; returns how many were skipped. A stall or a late start then ends
  // in one late call, never a stale call followed by the late one.
  //
  // `Rules` is TimerOptions or ScheduleRules: anything with period,
  // overrun_policy, max_burst and oneshot.
  template <typename Rules>
  int64_t SkipToLatestDue(Instant due_by, const Rules& rules) {
    if (rules.oneshot || rules.overrun_policy != OverrunPolicy::kSkip) return 0;
    if (Expected(k_ + 1, rules.period) > due_by) return 0;  // the common case
    return SkipTo(due_by, rules.period);
  }

  // After the current call ended at `end`: moves to the next call per the
  // overrun policy (see OverrunPolicy in timer_options.h).
  template <typename Rules>
  Next AfterRun(Instant end, const Rules& rules) {
    if (Expected(k_ + 1, rules.period) >= end) {  // on time: the common case
      ++k_;
      return Next();
    }
    return AfterOverrun(end, ScheduleRules{rules.period, rules.overrun_policy,
                                           rules.max_burst, rules.oneshot});
  }

 private:
  int64_t SkipTo(Instant due_by, absl::Duration period);
  Next AfterOverrun(Instant end, const ScheduleRules& rules);
  // The calls k+1 .. j are missed, j + 1 is the first on time (j >= k + 1):
  // applies the policy.
  Next ApplyOverrun(int64_t j, Instant end, absl::Duration skip_gap,
                    const ScheduleRules& rules);

  Instant origin_;
  int64_t k_ = 1;
};

}  // namespace timer
}  // namespace cyber

#endif  // TIMER_PERIODIC_SCHEDULE_H_
