// The process-wide scheduler, and cyber::Async on it.
//
// Created on first use from flags: --scheduler_conf (a Cyber-style scheduler
// conf in protobuf text format), or else one group described by
// --scheduler_processors (0: one per core), --scheduler_cpuset,
// --scheduler_affinity, --scheduler_policy and --scheduler_priority; and
// --routine_stack_size. It is made wired to a process timer system
// (timer/default_timer_system.h) whose callbacks it runs and whose wheel
// its SleepFor arms, so Async, SleepFor, CreateTask and Node work whoever
// asks first.
//
// Its life, and what DefaultScheduler() returns at each stage:
//   never started  made on first use (a program that never calls Init);
//   started        StartDefaultScheduler() (cyber::Init) keeps a running
//                  one or makes a new one;
//   shut down      ShutdownDefaultScheduler() (cyber::Shutdown) stops the
//                  timer system, then the scheduler, which is kept and
//                  returned, refusing work with a clear error (an Async
//                  future holds it; CreateTask returns FailedPrecondition),
//                  until the next StartDefaultScheduler(). Never an abort.
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
// process runs it, or while somebody holds it this way (a Node does).
// After a shutdown, the next StartDefaultScheduler() drops the process's
// own reference: nothing is kept for ever.
std::shared_ptr<Scheduler> DefaultSchedulerRef();
// A running process scheduler: the current one, or a new one (with a new
// process timer system) if there is none or it is shut down.
Scheduler* StartDefaultScheduler();
// Shuts the process timer system and then the default scheduler down
// (idempotent); see above.
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
