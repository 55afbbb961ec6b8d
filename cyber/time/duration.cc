#include "cyber/time/duration.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "cyber/time/current_clock.h"
#include "cyber/time/sleep_on_clock.h"
#include "cyber/time/steady_clock.h"

namespace cyber {

Duration::Duration(double seconds) : ns_(std::llround(seconds * 1e9)) {}

Duration Duration::operator*(double scale) const {
  return Duration(static_cast<int64_t>(std::llround(static_cast<double>(ns_) * scale)));
}

void Duration::Sleep() const {
  if (ns_ <= 0) return;
  Clock* const clock = CurrentClock();
  SleepOnClock(clock, clock->Now() + ToAbsl());
}

std::ostream& operator<<(std::ostream& os, const Duration& d) {
  const int64_t ns = d.ToNanosecond();
  const uint64_t magnitude = ns < 0 ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%s%llu.%09llu", ns < 0 ? "-" : "",
                static_cast<unsigned long long>(magnitude / 1000000000),
                static_cast<unsigned long long>(magnitude % 1000000000));
  return os << buf;
}

}  // namespace cyber
