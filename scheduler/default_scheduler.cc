#include "scheduler/default_scheduler.h"

#include <memory>

#include "cyber/common/runtime_scope.h"

namespace cyber {
namespace scheduler {

std::shared_ptr<Scheduler> DefaultSchedulerRef() {
  return ProcessRuntimeScope().shared_part(&RuntimeScope::scheduler);
}

Scheduler* DefaultScheduler() { return DefaultSchedulerRef().get(); }

Scheduler* CurrentScheduler() { return CurrentSchedulerRef().get(); }

std::shared_ptr<Scheduler> CurrentSchedulerRef() {
  return CurrentRuntime().shared_part(&RuntimeScope::scheduler);
}

}  // namespace scheduler
}  // namespace cyber
