#include "timer/ambient_timer_system.h"

namespace cyber {
namespace timer {

namespace {
using ambient_internal::t_ambient_front;
}  // namespace

std::shared_ptr<WheelFrontEnd> AmbientTimerFrontEnd() {
  return t_ambient_front != nullptr ? t_ambient_front->shared_from_this()
                                    : nullptr;
}

WheelFrontEnd* AmbientTimerFrontEndPointer() { return t_ambient_front; }

ScopedAmbientTimerSystem::ScopedAmbientTimerSystem(WheelFrontEnd* front)
    : previous_(t_ambient_front),
      clock_(front != nullptr ? front->clock() : nullptr) {
  t_ambient_front = front;
}

ScopedAmbientTimerSystem::~ScopedAmbientTimerSystem() {
  t_ambient_front = previous_;
}

}  // namespace timer
}  // namespace cyber
