// The process-wide scheduler, and cyber::Async on it.
//
// Created on first use from flags: --scheduler_conf (a Cyber-style scheduler
// conf in protobuf text format), or else one group described by
// --scheduler_processors (0: one per core), --scheduler_cpuset,
// --scheduler_affinity, --scheduler_policy and --scheduler_priority; and
// --routine_stack_size. cyber::Init() creates it and makes it the
// timer system's dispatcher; cyber::Shutdown() shuts it down after the
// timers. A bad conf file is reported (AERROR, naming file, line and field)
// and the default configuration is used instead, so the process still runs.
//
// Threads: thread-safe.

#ifndef SCHEDULER_DEFAULT_SCHEDULER_H_
#define SCHEDULER_DEFAULT_SCHEDULER_H_

#include <utility>

#include "scheduler/scheduler.h"

namespace cyber {
namespace scheduler {

Scheduler* DefaultScheduler();
// Shuts the default scheduler down (idempotent); the next DefaultScheduler()
// creates a new one.
void ShutdownDefaultScheduler();

}  // namespace scheduler

// Runs f(args...) in a routine of the process scheduler; the future carries
// its result or exception.
template <typename F, typename... Args>
auto Async(F&& f, Args&&... args) {
  return scheduler::DefaultScheduler()->Async(std::forward<F>(f),
                                              std::forward<Args>(args)...);
}

}  // namespace cyber

#endif  // SCHEDULER_DEFAULT_SCHEDULER_H_
