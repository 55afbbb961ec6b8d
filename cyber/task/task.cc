#include "cyber/task/task.h"

#include <algorithm>
#include <thread>

#include "cyber/time/current_clock.h"
#include "cyber/time/sleep_on_clock.h"
#include "cyber/time/steady_clock.h"
#include "scheduler/croutine.h"

namespace cyber {

void Yield() {
  if (scheduler::CRoutine::Current() != nullptr) {
    scheduler::CRoutine::Yield();
  } else {
    std::this_thread::yield();
  }
}

void SleepFor(absl::Duration interval) {
  if (scheduler::CRoutine::Current() != nullptr) {
    // Zero or negative: CRoutine::SleepUntil yields (a turn for others).
    scheduler::CRoutine::SleepFor(std::max(interval, absl::ZeroDuration()));
    return;
  }
  if (interval <= absl::ZeroDuration()) return;
  Clock* const clock = CurrentClock();
  SleepOnClock(clock, clock->Now() + interval);
}

void SleepFor(const std::chrono::microseconds& interval) {
  cyber::SleepFor(absl::FromChrono(interval));
}

void USleep(useconds_t usec) { cyber::SleepFor(absl::Microseconds(usec)); }

}  // namespace cyber
