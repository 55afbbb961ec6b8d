// The process-wide timer system used by Timers constructed without an
// explicit TickDriver (as Cyber RT code does): a TickDriver on the steady
// clock and a CallbackExecutor as its dispatcher.
//
// Why here and nowhere else: core classes never reach for singletons; this
// file is the one place the default is made, and cyber::Init/Shutdown
// (cyber/init) are the one place that starts and stops it.
//
// Threads: all functions are thread-safe.

#ifndef TIMER_DEFAULT_TIMER_SYSTEM_H_
#define TIMER_DEFAULT_TIMER_SYSTEM_H_

#include "timer/tick_driver.h"

namespace cyber {
namespace timer {

// The default driver, created on first use (or again after a shutdown).
TickDriver* DefaultTickDriver();

// Makes `dispatcher` (e.g. the scheduler's coroutine pool) the dispatcher of
// the default timer system from its next creation on; null restores the
// built-in CallbackExecutor. cyber::Init() calls this before anything creates
// a Timer. The dispatcher must outlive every Timer on that system.
void SetDefaultDispatcher(Dispatcher* dispatcher);

// Stops the default tick thread and callback executor (idempotent). Timers on
// it stop firing; Schedule() on them then fails with FailedPrecondition.
// The objects themselves are kept (leaked) so such Timers stay safe to stop
// and destroy.
void ShutdownDefaultTimerSystem();

}  // namespace timer
}  // namespace cyber

#endif  // TIMER_DEFAULT_TIMER_SYSTEM_H_
