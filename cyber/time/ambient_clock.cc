#include "cyber/time/ambient_clock.h"

namespace cyber {

namespace {
thread_local Clock* t_ambient_clock = nullptr;
}  // namespace

Clock* AmbientClock() { return t_ambient_clock; }

ScopedAmbientClock::ScopedAmbientClock(Clock* clock) : previous_(t_ambient_clock) {
  t_ambient_clock = clock;
}

ScopedAmbientClock::~ScopedAmbientClock() { t_ambient_clock = previous_; }

}  // namespace cyber
