#include "timer/ambient_timer_system.h"

namespace cyber {
namespace timer {

TimerSystem* AmbientTimerFrontEndPointer() {
  const RuntimeScope* const scope = CurrentRuntimeScope();
  return scope != nullptr ? scope->timers.load(std::memory_order_acquire)
                          : nullptr;
}

std::shared_ptr<TimerSystem> AmbientTimerFrontEnd() {
  TimerSystem* const front = AmbientTimerFrontEndPointer();
  return front != nullptr ? front->shared_from_this() : nullptr;
}

}  // namespace timer
}  // namespace cyber
