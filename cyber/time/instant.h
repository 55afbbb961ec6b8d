// Instant: a point in time on a monotonic Clock, as the duration since that
// clock's epoch.
//
// Why not absl::Time: absl::Time means civil (wall-clock) time, and scheduling
// in this project never reads the wall clock. An Instant from one clock is
// meaningless on another; keep instants from different clocks apart.
//
// Value type; thread-compatible.

#ifndef CYBER_TIME_INSTANT_H_
#define CYBER_TIME_INSTANT_H_

#include <cstdint>
#include <ostream>

#include "absl/time/time.h"

namespace cyber {

// absl::ToInt64Nanoseconds(d), computed here for durations from 0 to
// 2^33 s (about 272 years) and by absl otherwise. Why: Debian's shared
// libabsl_time keeps Duration arithmetic and conversions out of line, a
// call each, which a path run once per service call notices. Reads the
// Duration's representation (whole seconds, and quarter nanoseconds in
// [0, 4e9)) through absl's time_internal accessors.
inline int64_t ToInt64NanosecondsInline(absl::Duration d) {
  const int64_t hi = absl::time_internal::GetRepHi(d);
  if (hi >= 0 && (hi >> 33) == 0) {  // finite (infinite has hi at the limits)
    return hi * 1000 * 1000 * 1000 +
           static_cast<int64_t>(absl::time_internal::GetRepLo(d) / 4);
  }
  return absl::ToInt64Nanoseconds(d);
}

class Instant {
 public:
  // The clock's epoch.
  constexpr Instant() = default;

  static constexpr Instant FromEpoch(absl::Duration since_epoch) {
    return Instant(since_epoch);
  }
  // Later than every finite instant: "no deadline".
  static constexpr Instant InfiniteFuture() {
    return Instant(absl::InfiniteDuration());
  }

  constexpr absl::Duration SinceEpoch() const { return since_epoch_; }
  bool IsInfiniteFuture() const {
    return since_epoch_ == absl::InfiniteDuration();
  }

  Instant& operator+=(absl::Duration d) {
    since_epoch_ += d;
    return *this;
  }
  Instant& operator-=(absl::Duration d) {
    since_epoch_ -= d;
    return *this;
  }

  friend Instant operator+(Instant t, absl::Duration d) { return t += d; }
  friend Instant operator+(absl::Duration d, Instant t) { return t += d; }
  friend Instant operator-(Instant t, absl::Duration d) { return t -= d; }
  friend absl::Duration operator-(Instant a, Instant b) {
    return a.since_epoch_ - b.since_epoch_;
  }
  // absl::ToInt64Nanoseconds(to - from), without absl's out-of-line
  // arithmetic when both instants lie within 2^31 s (about 68 years) after
  // the epoch (see ToInt64NanosecondsInline).
  friend int64_t NanosecondsBetween(Instant from, Instant to) {
    const int64_t hi_from = absl::time_internal::GetRepHi(from.since_epoch_);
    const int64_t hi_to = absl::time_internal::GetRepHi(to.since_epoch_);
    if (((hi_from | hi_to) >> 31) != 0) {  // negative, far or infinite
      return absl::ToInt64Nanoseconds(to - from);
    }
    // Exact in quarter nanoseconds, then truncated toward zero, as absl.
    const int64_t quarters =
        (hi_to - hi_from) * 4 * 1000 * 1000 * 1000 +
        (static_cast<int64_t>(absl::time_internal::GetRepLo(to.since_epoch_)) -
         static_cast<int64_t>(absl::time_internal::GetRepLo(from.since_epoch_)));
    return quarters / 4;
  }

  friend bool operator==(Instant a, Instant b) {
    return a.since_epoch_ == b.since_epoch_;
  }
  friend bool operator!=(Instant a, Instant b) { return !(a == b); }
  friend bool operator<(Instant a, Instant b) {
    return a.since_epoch_ < b.since_epoch_;
  }
  friend bool operator>(Instant a, Instant b) { return b < a; }
  friend bool operator<=(Instant a, Instant b) { return !(b < a); }
  friend bool operator>=(Instant a, Instant b) { return !(a < b); }

  friend std::ostream& operator<<(std::ostream& os, Instant t) {
    return os << "epoch+" << absl::FormatDuration(t.since_epoch_);
  }

 private:
  constexpr explicit Instant(absl::Duration since_epoch)
      : since_epoch_(since_epoch) {}

  absl::Duration since_epoch_;
};

}  // namespace cyber

#endif  // CYBER_TIME_INSTANT_H_
