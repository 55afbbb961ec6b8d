#include "cyber/time/rate.h"

#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "cyber/common/log.h"
#include "cyber/time/current_clock.h"
#include "cyber/time/sleep_on_clock.h"
#include "cyber/time/steady_clock.h"

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

namespace {

bool UsablePeriod(absl::Duration period) {
  return period > absl::ZeroDuration() && period != absl::InfiniteDuration();
}

absl::Duration PeriodOfFrequency(double hz) {
  if (!(hz > 0) || std::isinf(hz)) return absl::ZeroDuration();
  return absl::Seconds(1.0 / hz);
}

}  // namespace

Rate::Rate(absl::Duration period, const std::string& what)
    : period_(UsablePeriod(period) ? period : absl::ZeroDuration()),
      clock_(CurrentClock()),
      start_(clock_->Now()) {
  if (!ok()) {
    AERROR << "Rate(" << what << "): gives no positive finite period ("
           << absl::FormatDuration(period) << "); Sleep() will return at once";
  }
}

Rate::Rate(double frequency)
    : Rate(PeriodOfFrequency(frequency), absl::StrCat(frequency, " Hz")) {}

Rate::Rate(uint64_t nanoseconds)
    : Rate(nanoseconds > static_cast<uint64_t>(INT64_MAX)
               ? absl::InfiniteDuration()
               : absl::Nanoseconds(static_cast<int64_t>(nanoseconds)),
           absl::StrCat(nanoseconds, " ns")) {}

Rate::Rate(const Duration& period)
    : Rate(period.ToAbsl(), absl::StrCat("Duration ", period.ToSecond(), " s")) {}

void Rate::Sleep() {
  if (!ok()) {
    AERROR_EVERY(1000) << "Rate::Sleep(): this Rate has no valid period (see the "
                          "error at its construction); returning at once";
    return;
  }
  const Instant now = clock_->Now();
  Instant deadline = NextDeadline();
  if (now >= deadline) ++overruns_;  // returns at once: say so
  if (now > deadline + period_) {
    // More than a whole period late: jump to the latest deadline not after
    // now, so this call returns at once and the next keeps the phase.
    absl::Duration remainder;  // absl requires somewhere to put it
    const int64_t behind = absl::IDivDuration(now - deadline, period_, &remainder);
    missed_ += behind;
    cycle_ += behind;
    deadline = NextDeadline();
  }
  SleepOnClock(clock_, deadline);
  ++cycle_;
  const Instant returned = clock_->Now();
  if (!last_return_.IsInfiniteFuture()) actual_cycle_ = returned - last_return_;
  last_return_ = returned;
}

void Rate::Reset() {
  start_ = clock_->Now();
  cycle_ = 1;
  overruns_ = 0;
  last_return_ = Instant::InfiniteFuture();
  actual_cycle_ = absl::ZeroDuration();
}

}  // namespace cyber
