// TickDriver: another name for timer::TimerSystem (timer/timer_system.h),
// so that code that spells it TickDriver compiles unchanged.
#ifndef TIMER_TICK_DRIVER_H_
#define TIMER_TICK_DRIVER_H_

#include "timer/timer_system.h"

namespace cyber {
namespace timer {

using TickDriver = TimerSystem;

}  // namespace timer
}  // namespace cyber

#endif  // TIMER_TICK_DRIVER_H_
