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

// The scheduler of the graph whose code runs on this thread: inside a
// routine, that routine's scheduler; else the one a ScopedAmbientScheduler
// installed (a simulated graph around its components' Init()); else the
// process scheduler. What Cyber-style calls that name no scheduler use
// (cyber::Async, scheduler::Instance()), so a graph's tasks stay on its
// scheduler and clock.
Scheduler* CurrentScheduler();

// Installs `scheduler` as this thread's ambient scheduler until destroyed.
class ScopedAmbientScheduler {
 public:
  explicit ScopedAmbientScheduler(Scheduler* scheduler);
  ~ScopedAmbientScheduler();
  ScopedAmbientScheduler(const ScopedAmbientScheduler&) = delete;
  ScopedAmbientScheduler& operator=(const ScopedAmbientScheduler&) = delete;

 private:
  Scheduler* const previous_;
};

}  // namespace scheduler

// Runs f(args...) in a routine of the current scheduler (see
// CurrentScheduler(): the process scheduler, outside any graph's code); the
// future carries its result or exception.
template <typename F, typename... Args>
auto Async(F&& f, Args&&... args) {
  return scheduler::CurrentScheduler()->Async(std::forward<F>(f),
                                              std::forward<Args>(args)...);
}

}  // namespace cyber

#endif  // SCHEDULER_DEFAULT_SCHEDULER_H_
