// The steady clock (CLOCK_MONOTONIC) as absl::Time, for the tools' and
// drivers' intervals, rates and deadlines: absl's types in interfaces,
// never the wall clock. The value counts from the clock's own epoch, not
// the Unix epoch: compare and subtract it, never print it as a date.

#ifndef CYBER_COMMON_STEADY_TIME_H_
#define CYBER_COMMON_STEADY_TIME_H_

#include <time.h>

#include <chrono>

#include "absl/time/time.h"

namespace cyber {

inline absl::Time SteadyNow() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return absl::FromUnixSeconds(ts.tv_sec) + absl::Nanoseconds(ts.tv_nsec);
}

// SteadyNow()'s time as std::chrono's steady clock (the same clock on
// Linux), for a condition variable's deadline; InfiniteFuture: max().
inline std::chrono::steady_clock::time_point ToSteadyTimePoint(absl::Time t) {
  if (t == absl::InfiniteFuture()) return std::chrono::steady_clock::time_point::max();
  return std::chrono::steady_clock::time_point(
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          absl::ToChronoNanoseconds(t - absl::UnixEpoch())));
}

}  // namespace cyber

#endif  // CYBER_COMMON_STEADY_TIME_H_
