// Fire and Lateness: what the accuracy tool records per timer call (or per
// wake-up of a floor thread), and the exact percentiles of a scenario.
//
// Why exact here when the timer keeps a LatencyHistogram: the report compares
// two distributions measured in the same run and plots them, so it keeps
// every sample (a 2 ms timer for 30 s is 15,000 of them) and sorts; there is
// no bucket error to explain next to the floor.
//
// Value types and a pure function; thread-compatible.

#ifndef TESTS_ACCURACY_FIRE_RECORD_H_
#define TESTS_ACCURACY_FIRE_RECORD_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/time/time.h"
#include "cyber/time/instant.h"

namespace cyber {
namespace accuracy {

// One call of a timer's callback, or one return of a floor thread's sleep.
struct Fire {
  // The call's index in its schedule: k of origin + k * period for a periodic
  // timer (and its floor), the plan index for a oneshot.
  int64_t index = 0;
  Instant expected;  // when it was due
  Instant actual;    // when it ran (callback start) or woke
  // Timers only: the wheel tick the deadline rounds up to. actual - tick is
  // the lateness without the by-design rounding ("past tick").
  std::optional<Instant> tick;
  int64_t missed_before = 0;  // periods the timer skipped since its last call

  absl::Duration lateness() const { return actual - expected; }
};

// Exact order statistics of a set of latenesses (nearest rank: the q-quantile
// is the ceil(q * n)-th smallest sample).
struct Lateness {
  int64_t count = 0;
  int64_t early = 0;  // samples < 0: a call before its expected time
  absl::Duration min;
  absl::Duration p50;
  absl::Duration p90;
  absl::Duration p99;
  absl::Duration p999;
  absl::Duration max;
  absl::Duration mean;
};

// All zero for an empty set. Takes the samples by value: it sorts them.
Lateness Summarize(std::vector<absl::Duration> samples);

// actual - expected of every fire.
std::vector<absl::Duration> LatenessOf(const std::vector<Fire>& fires);
// actual - tick of every fire that has a tick.
std::vector<absl::Duration> PastTickOf(const std::vector<Fire>& fires);

}  // namespace accuracy
}  // namespace cyber

#endif  // TESTS_ACCURACY_FIRE_RECORD_H_
