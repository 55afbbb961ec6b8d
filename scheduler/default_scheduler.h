// The scheduler that code which names none uses, and cyber::Async on it.
//
// Cyber-style code says `cyber::Async(f)`, `scheduler::Instance()` or
// `Node("x")` and names no scheduler. It gets the scheduler of the runtime
// it belongs to, by the one rule of cyber/common/runtime_scope.h: the
// runtime scope installed on this thread (inside a routine, that routine's
// scheduler; around a component's Init()/Clear(), its graph's), else the
// process runtime's (cyber/runtime/process_runtime.h: made on first use,
// started by cyber::Init, shut down by cyber::Shutdown; after a shutdown it
// refuses work with a clear error until the next Init). So a graph's tasks
// stay on its scheduler and clock.
//
// Two labels: //scheduler:current_scheduler is this header for libraries
// of this repository (it links no process runtime); users depend on
// //scheduler:default_scheduler, which also links the process runtime.
//
// Threads: thread-safe.

#ifndef SCHEDULER_DEFAULT_SCHEDULER_H_
#define SCHEDULER_DEFAULT_SCHEDULER_H_

#include <memory>
#include <utility>

#include "scheduler/scheduler.h"

namespace cyber {
namespace scheduler {

// The process runtime's scheduler, whatever scope is installed; null only
// in a binary that links no process runtime.
Scheduler* DefaultScheduler();
// The same, shared: it holds the whole process runtime (an aliasing
// shared_ptr), so the pointer stays valid while held, also across a
// cyber::Shutdown() and the next cyber::Init().
std::shared_ptr<Scheduler> DefaultSchedulerRef();

// The scheduler of the runtime whose code runs on this thread (see above);
// null only in a binary that links no process runtime, outside every
// runtime's scope.
Scheduler* CurrentScheduler();
// The same, holding it when it is the process runtime's (a runtime's own
// scheduler outlives the runtime's code and is not held).
std::shared_ptr<Scheduler> CurrentSchedulerRef();

}  // namespace scheduler

// Runs f(args...) in a routine of the current scheduler (see
// CurrentScheduler(): the process scheduler, outside any graph's code); the
// future carries its result or exception.
template <typename F, typename... Args>
auto Async(F&& f, Args&&... args) {
  return scheduler::CurrentSchedulerRef()->Async(std::forward<F>(f),
                                                 std::forward<Args>(args)...);
}

}  // namespace cyber

#endif  // SCHEDULER_DEFAULT_SCHEDULER_H_
