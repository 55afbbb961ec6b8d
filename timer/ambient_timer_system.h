// Internal to this repository: not part of the API (docs/api.md lists the
// API headers); its Bazel target is visible only inside this repository.
//
// The timer system of the runtime whose code runs on this thread.
//
// Why: a component that makes its own Timer with the plain constructors
// (Cyber RT code does: `cyber::Timer t(100, cb, false)`) names no timer
// system. In a graph that runs on its own runtime (a simulated graph, a
// test's own runtime) such a timer must run there, on the runtime's clock,
// not on the process's real-time system. The system is the `timers` field of
// the runtime scope installed on this thread (cyber/runtime/runtime_scope.h:
// the one lookup rule). A Timer without a TickDriver binds, at each
// Schedule() from idle, to the ambient system if there is one, else to the
// process system (timer/default_timer_system.h).
//
// Threads: per thread, like the runtime scope.

#ifndef TIMER_AMBIENT_TIMER_SYSTEM_H_
#define TIMER_AMBIENT_TIMER_SYSTEM_H_

#include <memory>

#include "cyber/runtime/runtime_scope.h"
#include "timer/timer_system.h"

namespace cyber {
namespace timer {

// This thread's ambient timer system, or null outside any runtime's code.
// REQUIRES of whoever installs one in a scope: it is owned by a
// std::shared_ptr (every TickDriver's is) and stays alive while installed.
std::shared_ptr<TimerSystem> AmbientTimerFrontEnd();
// The same without taking a reference (null if none): only valid while the
// scope lasts.
TimerSystem* AmbientTimerFrontEndPointer();

}  // namespace timer
}  // namespace cyber

#endif  // TIMER_AMBIENT_TIMER_SYSTEM_H_
