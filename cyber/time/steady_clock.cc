#include "cyber/time/steady_clock.h"

#include <errno.h>
#include <time.h>

#include "cyber/common/log.h"

namespace cyber {

SteadyClock* SteadyClock::Get() {
  static SteadyClock* const clock = new SteadyClock();
  return clock;
}

Instant SteadyClock::Now() const {
  timespec ts;
  ACHECK(clock_gettime(CLOCK_MONOTONIC, &ts) == 0);
  return Instant::FromEpoch(absl::DurationFromTimespec(ts));
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
      absl::ToInt64Nanoseconds(t.SinceEpoch())));
}

WakeReason SteadyClock::WaitUntil(Instant deadline, WakeupEvent* wakeup) {
  if (deadline.IsInfiniteFuture()) {
    return wakeup->Block([] { return false; }, nullptr);
  }
  const std::chrono::steady_clock::time_point limit = ToTimePoint(deadline);
  return wakeup->Block([this, deadline] { return Now() >= deadline; }, &limit);
}

}  // namespace cyber
