// The timer system of the graph whose code runs on this thread.
//
// Why: a component that makes its own Timer with the plain constructors
// (Cyber RT code does: `cyber::Timer t(100, cb, false)`) names no timer
// system. In a graph that runs on its own scheduler and clock (a simulated
// graph, a test's private scheduler) such a timer must run there, on the
// graph's clock, not on the process's real-time system. So the code that
// runs a graph's code marks it: the scheduler installs its timing wheel for
// each resume of one of its routines (timer and reader callbacks, tasks),
// the launcher around components' Init(), Clear() and shutdown. A Timer
// without a TickDriver binds, at each Schedule() from idle, to the ambient
// system if there is one, else to the process system
// (timer/default_timer_system.h). The
// ambient clock (cyber/time/ambient_clock.h) is installed with it, so
// Time::Now(), Rate and Duration::Sleep follow the same clock.
//
// Threads: per thread, like the ambient clock; scopes nest.

#ifndef TIMER_AMBIENT_TIMER_SYSTEM_H_
#define TIMER_AMBIENT_TIMER_SYSTEM_H_

#include <memory>

#include "cyber/time/ambient_clock.h"
#include "timer/wheel_front_end.h"

namespace cyber {
namespace timer {

// This thread's ambient timer system, or null outside any graph's code.
// REQUIRES of whoever installs one: it is owned by a std::shared_ptr (every
// TickDriver's is) and stays alive while installed.
std::shared_ptr<WheelFrontEnd> AmbientTimerFrontEnd();
// The same without taking a reference (null if none): only valid while the
// ambient scope lasts.
WheelFrontEnd* AmbientTimerFrontEndPointer();

namespace ambient_internal {
// The variable behind the functions above, for a processor resuming a
// routine only (see cyber/time/ambient_clock.h, ambient_internal).
inline thread_local WheelFrontEnd* t_ambient_front = nullptr;
}  // namespace ambient_internal

// Installs `front` (null: none) and its clock as this thread's ambient
// timer system and clock until destroyed.
class ScopedAmbientTimerSystem {
 public:
  explicit ScopedAmbientTimerSystem(WheelFrontEnd* front);
  ~ScopedAmbientTimerSystem();
  ScopedAmbientTimerSystem(const ScopedAmbientTimerSystem&) = delete;
  ScopedAmbientTimerSystem& operator=(const ScopedAmbientTimerSystem&) = delete;

 private:
  WheelFrontEnd* const previous_;
  ScopedAmbientClock clock_;
};

}  // namespace timer
}  // namespace cyber

#endif  // TIMER_AMBIENT_TIMER_SYSTEM_H_
