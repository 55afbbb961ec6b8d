// TickDriver is the former name of timer::TimerSystem (timer/timer_system.h),
// kept so that code written against it compiles unchanged.
#ifndef TIMER_TICK_DRIVER_H_
#define TIMER_TICK_DRIVER_H_

#include "timer/timer_system.h"

namespace cyber {
namespace timer {

using TickDriver = TimerSystem;

}  // namespace timer
}  // namespace cyber

#endif  // TIMER_TICK_DRIVER_H_
