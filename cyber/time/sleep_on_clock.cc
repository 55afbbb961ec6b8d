#include "cyber/time/sleep_on_clock.h"

#include "cyber/common/wait_list.h"

namespace cyber {

void SleepOnClock(Clock* clock, Instant deadline) {
  Parkable* const routine = CurrentCoroutine();
  if (routine != nullptr && routine->ParkUntil(deadline, clock)) return;
  clock->SleepUntil(deadline);
}

}  // namespace cyber
