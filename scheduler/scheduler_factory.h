// scheduler::Instance(): Cyber RT's way to reach the process scheduler, for
// code ported from Cyber RT unchanged:
//
//   auto sched = cyber::scheduler::Instance();
//   if (!sched->CreateTask([this] { Loop(); }, "lidar_loop")) return false;
//   sched->NotifyTask("lidar_loop");     // wakes its WaitForData()
//   sched->RemoveTask("lidar_loop");
//
// Cyber's calls return bool; a false comes with an AERROR carrying the
// reason (the absl::Status of the Scheduler call underneath: a duplicate or
// empty name, a full or shut-down scheduler, an unknown task). New code
// calls scheduler::DefaultScheduler() (or its own Scheduler) and gets the
// absl::Status itself.
//
// Why an adapter object rather than the Scheduler: the Scheduler's own
// NotifyTask/RemoveTask(name) return absl::Status, and C++ cannot overload
// on the return type. Instance() holds no scheduler: each call looks up
// CurrentScheduler() afresh — the process scheduler, or the scheduler of
// the graph whose code calls it (a simulated graph's) — so the pointer stays
// right across cyber::Init()/Shutdown() cycles (after a Shutdown the
// process scheduler refuses work until the next Init, as
// scheduler/default_scheduler.h documents).
//
// Not supported: Cyber's NotifyTask(uint64_t crid) (routine ids from
// GlobalData's name hash; pass the task's name) and data visitors in
// CreateTask (tasks here wait with CRoutine::WaitForData and are woken by
// NotifyTask).
//
// Threads: thread-safe.

#ifndef SCHEDULER_SCHEDULER_FACTORY_H_
#define SCHEDULER_SCHEDULER_FACTORY_H_

#include <functional>
#include <string>

#include "scheduler/scheduler.h"

namespace cyber {
namespace scheduler {

class CyberSchedulerApi {
 public:
  // A long-lived routine named `name` at the conf's priority for the name.
  bool CreateTask(std::function<void()> func, const std::string& name);
  bool NotifyTask(const std::string& name);
  bool RemoveTask(const std::string& name);
  // The scheduler the calls go to now (the Status-returning API).
  Scheduler* scheduler() const;
};

// The one adapter (stateless).
CyberSchedulerApi* Instance();

}  // namespace scheduler
}  // namespace cyber

#endif  // SCHEDULER_SCHEDULER_FACTORY_H_
