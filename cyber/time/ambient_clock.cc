#include "cyber/time/ambient_clock.h"

namespace cyber {

namespace {
thread_local const Clock* t_driven_clock = nullptr;
}  // namespace

ScopedClockDriver::ScopedClockDriver(const Clock* clock) : previous_(t_driven_clock) {
  t_driven_clock = clock;
}

ScopedClockDriver::~ScopedClockDriver() { t_driven_clock = previous_; }

bool DrivesClock(const Clock* clock) {
  return clock != nullptr && t_driven_clock == clock;
}

Clock* AmbientClock() { return FromCurrentRuntime(&RuntimeScope::clock); }

}  // namespace cyber
