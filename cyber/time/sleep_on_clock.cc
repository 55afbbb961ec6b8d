#include "cyber/time/sleep_on_clock.h"

#include "cyber/common/log.h"
#include "cyber/time/wait_list.h"
#include "cyber/time/current_clock.h"

namespace cyber {

void SleepOnClock(Clock* clock, Instant deadline) {
  Parkable* const routine = CurrentCoroutine();
  if (routine != nullptr && routine->ParkUntil(deadline, clock)) return;
  if (DrivesClock(clock)) {
    // E.g. a component's Init() sleeping in a simulated graph: the only
    // thread that could move the clock is this one.
    AERROR << "a blocking sleep of " << absl::FormatDuration(deadline - clock->Now())
           << " on a simulated clock, on the thread that moves that clock (a "
              "component's Init()?), would never end: it returns at once; "
              "sleep in a routine (a timer, a reader, a task) instead";
    return;
  }
  clock->SleepUntil(deadline);
}

}  // namespace cyber
