// The process timer system: what a Timer made without a TickDriver binds to
// when it starts (as Cyber RT code's timers do). The one place it is looked
// up; the process runtime (cyber/runtime/process_runtime.h, made on first
// use or by cyber::Init) is the one place that calls Install/Shutdown.
//
// Its life, and what a Timer's Schedule() gets at each stage:
//   never installed  a fallback system (steady clock, callbacks on a small
//                    CallbackExecutor), made here on first use, so a plain
//                    Timer works in a program that has no process runtime
//                    yet (no Init, no Async, no Node);
//   installed        the process runtime's timer system, whose callbacks
//                    run on its scheduler; the fallback (if any) keeps
//                    serving the timers already started on it until they
//                    stop;
//   shut down        none: DefaultTimerFrontEnd() is null and Schedule()
//                    fails with FailedPrecondition, until the next install.
// Shutdown closes the installed system and stops and frees the fallback;
// timers hold only the shared TimerSystem (timer/timer_system.h), which
// refuses arms once closed, so nothing keeps a pointer to a dead system.
//
// Threads: all functions are thread-safe.

#ifndef TIMER_DEFAULT_TIMER_SYSTEM_H_
#define TIMER_DEFAULT_TIMER_SYSTEM_H_

#include <memory>
#include <string>

#include "absl/functional/function_ref.h"
#include "timer/tick_driver.h"
#include "timer/timer_system.h"

namespace cyber {
namespace timer {

// What a default-bound Timer starts on now: the ambient timer system when
// the caller runs a graph's code (timer/ambient_timer_system.h: a routine of
// a scheduler with its own wheel, a component's Init() or Clear()), else
// the process system; null after a shutdown (see above).
std::shared_ptr<TimerSystem> DefaultTimerFrontEnd();

// Which front end DefaultTimerFrontEnd() would return now, without taking a
// reference or a lock, for a caller that holds a reference to a front end
// and only asks "is mine still the current one?" (a Timer restarting on the
// system it ran on). Never dereference it: it may be freed at any moment.
// Null when DefaultTimerFrontEnd() would make the fallback or return null.
const TimerSystem* DefaultTimerFrontEndHint();

// The current system's driver (for tools that report its statistics, and
// for the scheduler's SleepFor); null after a shutdown. Valid until the next
// ShutdownDefaultTimerSystem().
TickDriver* DefaultTickDriver();

// Says, once per process, that a timer starts on the fallback system: for
// the timer about to start on `front` (what DefaultTimerFrontEnd() returned
// for it), the first time `front` is the fallback, logs a warning naming
// the timer (`timer_name` is called only then) and why: no scheduler is
// wired (cyber::Init was not called), so its callbacks run on a small thread
// pool where scheduler conf priorities, groups and CPU affinity do not apply.
// Otherwise two atomic loads. Null `front`: nothing.
void NoteDefaultTimerStart(const TimerSystem* front,
                           absl::FunctionRef<std::string()> timer_name);

// Makes `driver`'s system (the process runtime's) the process system,
// replacing the current one for timers that start from now on. The driver
// stays its owner's. REQUIRES: `driver` outlives the next
// ShutdownDefaultTimerSystem().
void InstallDefaultTimerSystem(TickDriver* driver);

// Closes the installed system and stops and frees the fallback
// (idempotent). Timers on them stop firing; a queued call is dropped;
// Schedule() fails until the next install.
void ShutdownDefaultTimerSystem();

}  // namespace timer
}  // namespace cyber

#endif  // TIMER_DEFAULT_TIMER_SYSTEM_H_
