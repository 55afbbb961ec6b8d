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

#include <ostream>

#include "absl/time/time.h"

namespace cyber {

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
