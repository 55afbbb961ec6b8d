#include "cyber/time/current_clock.h"

#include "cyber/common/runtime_scope.h"
#include "cyber/time/steady_clock.h"

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

Clock* CurrentClock() {
  if (const RuntimeScope* scope = CurrentRuntimeScope()) {
    if (Clock* const c = scope->clock.load(std::memory_order_acquire)) return c;
  }
  return SteadyClock::Get();  // the process runtime's clock, always
}

}  // namespace cyber
