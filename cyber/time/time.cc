#include "cyber/time/time.h"

#include <cmath>
#include <cstdio>
#include <ctime>
#include <limits>

#include "absl/time/clock.h"
#include "cyber/time/current_clock.h"
#include "cyber/time/steady_clock.h"

namespace cyber {

const Time Time::MAX = Time(std::numeric_limits<uint64_t>::max());
const Time Time::MIN = Time(uint64_t{1});

Time::Time(double seconds)
    : ns_(seconds <= 0 ? 0 : static_cast<uint64_t>(std::llround(seconds * 1e9))) {}

namespace {

// The simulated clock of the graph whose code runs on this thread, if any.
Clock* SimulatedCurrentClock() {
  Clock* const c = CurrentClock();
  return c != SteadyClock::Get() ? c : nullptr;
}

Time TimeOn(const Clock& clock) {
  const int64_t ns = absl::ToInt64Nanoseconds(clock.Now().SinceEpoch());
  return Time(static_cast<uint64_t>(ns < 0 ? 0 : ns));
}

}  // namespace

Time Time::Now() {
  if (const Clock* sim = SimulatedCurrentClock()) return TimeOn(*sim);
  return Time(static_cast<uint64_t>(absl::GetCurrentTimeNanos()));
}

Time Time::MonoTime() { return TimeOn(*CurrentClock()); }

void Time::SleepUntil(const Time& time) {
  const Time now = Now();
  if (time <= now) return;
  (time - now).Sleep();
}

std::string Time::ToString() const {
  const std::time_t seconds = static_cast<std::time_t>(ns_ / 1000000000);
  std::tm utc;
  gmtime_r(&seconds, &utc);
  char date[32];
  std::strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S", &utc);
  char out[48];
  std::snprintf(out, sizeof(out), "%s.%09llu", date,
                static_cast<unsigned long long>(ns_ % 1000000000));
  return out;
}

std::ostream& operator<<(std::ostream& os, const Time& t) { return os << t.ToString(); }

}  // namespace cyber
