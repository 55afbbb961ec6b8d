// The process-wide scheduler, and cyber::Async on it.
//
// The process scheduler is the process runtime's (cyber/runtime/
// process_runtime.h, which says how it is made from the --scheduler_*
// flags and how it lives); this header is the scheduler-shaped view of it
// that Cyber-style code uses. It is wired to the runtime's timer system,
// the process timer system (timer/default_timer_system.h), whose callbacks
// it runs and whose wheel its SleepFor arms, so Async, SleepFor, CreateTask
// and Node work whoever asks first.
//
// Its life follows the runtime's, and what DefaultScheduler() returns at
// each stage:
//   never started  made on first use (a program that never calls Init);
//   started        StartDefaultScheduler() (cyber::Init) keeps a running
//                  one or makes a new one (a new process runtime);
//   shut down      ShutdownDefaultScheduler() (cyber::Shutdown) shuts the
//                  process runtime down: its timer system, then the
//                  scheduler, which is kept and returned, refusing work
//                  with a clear error (an Async future holds it; CreateTask
//                  returns FailedPrecondition), until the next
//                  StartDefaultScheduler(). Never an abort.
// A bad conf file is reported (AERROR, naming file, line and field) and
// the default configuration is used instead, so the process still runs.
//
// Threads: thread-safe.

#ifndef SCHEDULER_DEFAULT_SCHEDULER_H_
#define SCHEDULER_DEFAULT_SCHEDULER_H_

#include <memory>
#include <utility>

#include "scheduler/scheduler.h"

namespace cyber {
namespace scheduler {

Scheduler* DefaultScheduler();
// The same, shared: DefaultScheduler()'s pointer stays valid while the
// process runs it, or while somebody holds it this way (a Node does). The
// reference holds the whole process runtime (an aliasing shared_ptr). After
// a shutdown, the next StartDefaultScheduler() drops the process's own
// reference: nothing is kept for ever.
std::shared_ptr<Scheduler> DefaultSchedulerRef();
// A running process scheduler: the current one, or a new one (a new
// process runtime) if there is none or it is shut down.
Scheduler* StartDefaultScheduler();
// Shuts the process runtime down: its timer system, then the default
// scheduler (idempotent); see above.
void ShutdownDefaultScheduler();

// The scheduler of the runtime whose code runs on this thread: the
// scheduler of the runtime scope installed here (cyber/runtime/
// runtime_scope.h: inside a routine, that routine's scheduler; around a
// component's Init()/Clear(), its graph's), else the process scheduler.
// What Cyber-style calls that name no scheduler use (cyber::Async,
// scheduler::Instance(), Node), so a graph's tasks stay on its scheduler
// and clock.
Scheduler* CurrentScheduler();
// The same, holding it when it is the process scheduler (a runtime's own
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
