#include "timer/ambient_timer_system.h"

namespace cyber {
namespace timer {

TimerSystem* AmbientTimerFrontEndPointer() {
  return FromCurrentRuntime(&RuntimeScope::timers);
}

std::shared_ptr<TimerSystem> AmbientTimerFrontEnd() {
  TimerSystem* const front = AmbientTimerFrontEndPointer();
  return front != nullptr ? front->shared_from_this() : nullptr;
}

}  // namespace timer
}  // namespace cyber
