#include "cyber/time/rate.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace cyber {

absl::StatusOr<Rate> Rate::Create(absl::Duration period, Clock* clock) {
  if (period <= absl::ZeroDuration() || period == absl::InfiniteDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Rate: period ", absl::FormatDuration(period),
                     " must be positive and finite"));
  }
  if (clock == nullptr) {
    return absl::InvalidArgumentError("Rate: clock is null");
  }
  return Rate(period, clock);
}

Rate::Rate(absl::Duration period, Clock* clock)
    : period_(period), clock_(clock), start_(clock->Now()) {}

void Rate::Sleep() {
  const Instant now = clock_->Now();
  Instant deadline = NextDeadline();
  if (now > deadline + period_) {
    // More than a whole period late: jump to the latest deadline not after
    // now, so this call returns at once and the next keeps the phase.
    absl::Duration remainder;  // absl requires somewhere to put it
    const int64_t behind = absl::IDivDuration(now - deadline, period_, &remainder);
    missed_ += behind;
    cycle_ += behind;
    deadline = NextDeadline();
  }
  clock_->SleepUntil(deadline);
  ++cycle_;
  const Instant returned = clock_->Now();
  if (!last_return_.IsInfiniteFuture()) actual_cycle_ = returned - last_return_;
  last_return_ = returned;
}

void Rate::Reset() {
  start_ = clock_->Now();
  cycle_ = 1;
  last_return_ = Instant::InfiniteFuture();
  actual_cycle_ = absl::ZeroDuration();
}

}  // namespace cyber
