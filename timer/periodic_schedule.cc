#include "timer/periodic_schedule.h"

namespace cyber {
namespace timer {

int64_t PeriodicSchedule::SkipTo(Instant due_by, absl::Duration period) {
  absl::Duration remainder;
  const int64_t j = absl::IDivDuration(due_by - origin_, period, &remainder);
  const int64_t skipped = j - k_;
  k_ = j;
  return skipped;
}

PeriodicSchedule::Next PeriodicSchedule::AfterOverrun(
    Instant end, const ScheduleRules& rules) {
  const absl::Duration period = rules.period;
  // j: the last call expected before `end` (j >= k + 1).
  absl::Duration remainder;
  int64_t j = absl::IDivDuration(end - origin_, period, &remainder);
  if (remainder == absl::ZeroDuration()) --j;  // expected at `end`: on time
  // kSkip's late call for j would fire now (at `end`); the next on-phase
  // call (j + 1) at its own instant. Their distance:
  const absl::Duration skip_gap = Expected(j + 1, period) - end;
  return ApplyOverrun(j, end, skip_gap, rules);
}

PeriodicSchedule::Next PeriodicSchedule::ApplyOverrun(int64_t j, Instant end,
                                                      absl::Duration skip_gap,
                                                      const ScheduleRules& rules) {
  const int64_t missed = j - k_;  // >= 1
  Next next;
  next.overrun = true;
  switch (rules.overrun_policy) {
    case OverrunPolicy::kSkip:
      // One late call for period j at once, unless the next
      // on-phase call is less than half a period after it: then that one.
      if (skip_gap >= rules.period / 2) {
        k_ = j;
        next.skipped = missed - 1;
      } else {
        k_ = j + 1;
        next.skipped = missed;
      }
      break;
    case OverrunPolicy::kDelay:
      origin_ = end;  // re-based: the next call one period after this run
      k_ = 1;
      next.skipped = missed;
      break;
    case OverrunPolicy::kBurst:
      // Back to back for the missed calls, at most max_burst of them.
      if (missed > rules.max_burst) next.skipped = missed - rules.max_burst;
      k_ += 1 + next.skipped;
      break;
  }
  return next;
}

}  // namespace timer
}  // namespace cyber
