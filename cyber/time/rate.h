// Rate: paces a loop at a fixed period on absolute deadlines.
//
// The k-th deadline is start + k * period, computed from the start, never
// from the previous wake-up: a late wake-up delays one cycle but does not
// shift the ones after it, so the average period is exact over any run
// (no drift). A cycle that overran by whole periods does not cause a burst of
// immediate returns: the missed deadlines are skipped (and counted) and the
// phase is kept, the way a sensor poller wants it. A Sleep() that returns
// at once because its deadline had already passed is an overrun, counted
// (Overruns()): two returns can only be closer than a period when one is.
// In a scheduler routine the sleep ends at the deadline itself (not on the
// timer tick after it), so a Rate of any period, 1 kHz or 2 kHz included,
// returns at exact steps.
//
//   auto rate = Rate::Create(absl::Milliseconds(10), SteadyClock::Get());
//   while (cyber::OK()) { PollImu(); rate->Sleep(); }
//
// Threads: a Rate is used by one thread (the loop it paces).

#ifndef CYBER_TIME_RATE_H_
#define CYBER_TIME_RATE_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cyber/time/clock.h"
#include "cyber/time/duration.h"

namespace cyber {

class Rate {
 public:
  // The schedule starts now: the first Sleep() returns at Now() + period.
  // Errors: InvalidArgument if `period` is not positive and finite or
  // `clock` is null.
  static absl::StatusOr<Rate> Create(absl::Duration period, Clock* clock);

  // Cyber RT's constructors, on the steady clock (in a graph on a simulated
  // clock, that clock: cyber/time/current_clock.h): a frequency in Hz, a
  // period in nanoseconds, or a cyber::Duration. (As in Cyber RT, Rate(10)
  // is ambiguous: write Rate(10.0) for 10 Hz.) A value that gives no
  // positive finite period is logged (AERROR, naming it); such a Rate is
  // not ok() and its Sleep() returns at once, logging again (rate-limited).
  explicit Rate(double frequency);
  explicit Rate(uint64_t nanoseconds);
  explicit Rate(const Duration& period);

  // Waits until the next deadline on the schedule (never earlier): a
  // scheduler routine parks (its processor runs other routines meanwhile)
  // when the Rate's clock is its scheduler's, anything else blocks. If that
  // deadline already passed, deadlines that are more than one period behind
  // are skipped so that the loop returns to its phase without a burst.
  void Sleep();

  // Restarts the schedule from Now().
  void Reset();

  bool ok() const { return period_ > absl::ZeroDuration(); }
  absl::Duration period() const { return period_; }
  // Time between the two latest returns from Sleep() (zero before the
  // second one).
  absl::Duration actual_cycle() const { return actual_cycle_; }
  // Cyber RT's spellings of the two.
  Duration ExpectedCycleTime() const { return Duration::FromAbsl(period_); }
  Duration CycleTime() const { return Duration::FromAbsl(actual_cycle_); }
  // Deadlines skipped because the loop was late by more than one period.
  int64_t MissedCycles() const { return missed_; }
  // Sleep() calls made at or after their deadline (the loop overran it):
  // each returned at once, without pacing.
  int64_t Overruns() const { return overruns_; }
  // The deadline the next Sleep() waits for.
  Instant NextDeadline() const { return start_ + cycle_ * period_; }

 private:
  Rate(absl::Duration period, Clock* clock);
  // The Cyber constructors' common part; `what` describes the argument.
  Rate(absl::Duration period, const std::string& what);

  absl::Duration period_;
  Clock* clock_;
  Instant start_;
  int64_t cycle_ = 1;  // index of the next deadline
  int64_t missed_ = 0;
  int64_t overruns_ = 0;
  Instant last_return_ = Instant::InfiniteFuture();
  absl::Duration actual_cycle_ = absl::ZeroDuration();
};

}  // namespace cyber

#endif  // CYBER_TIME_RATE_H_
