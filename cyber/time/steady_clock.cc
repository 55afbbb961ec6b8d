#include "cyber/time/steady_clock.h"

#include <errno.h>
#include <time.h>

#include <cstdint>

#include "cyber/common/log.h"

namespace cyber {

SteadyClock* SteadyClock::Get() {
  static SteadyClock* const clock = new SteadyClock();
  return clock;
}

Instant SteadyClock::Now() const {
  timespec ts;
  ACHECK(clock_gettime(CLOCK_MONOTONIC, &ts) == 0);
  // absl::DurationFromTimespec(ts), inline (it is a call into Debian's
  // shared libabsl_time): whole seconds and quarter nanoseconds, the
  // Duration's representation; clock_gettime's tv_nsec is in [0, 1e9).
  return Instant::FromEpoch(absl::time_internal::MakeDuration(
      static_cast<int64_t>(ts.tv_sec), static_cast<uint32_t>(ts.tv_nsec) * 4));
}

void SteadyClock::SleepUntil(Instant deadline) {
  if (deadline.IsInfiniteFuture()) {
    // Nothing can end this sleep; a caller wanting that uses WaitUntil().
    WakeupEvent never;
    WaitUntil(deadline, &never);
    return;
  }
  const timespec ts = absl::ToTimespec(deadline.SinceEpoch());
  while (true) {
    const int rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr);
    if (rc == 0) return;
    ACHECK(rc == EINTR) << "clock_nanosleep failed: " << rc;
    // Interrupted by a signal: the deadline is absolute, so just sleep again.
  }
}

std::chrono::steady_clock::time_point SteadyClock::ToTimePoint(Instant t) {
  return std::chrono::steady_clock::time_point(std::chrono::nanoseconds(
      ToInt64NanosecondsInline(t.SinceEpoch())));
}

WakeReason SteadyClock::WaitUntil(Instant deadline, WakeupEvent* wakeup) {
  if (deadline.IsInfiniteFuture()) {
    return wakeup->Block([] { return false; }, nullptr);
  }
  const std::chrono::steady_clock::time_point limit = ToTimePoint(deadline);
  return wakeup->Block([this, deadline] { return Now() >= deadline; }, &limit);
}

}  // namespace cyber
