#include "scheduler/default_scheduler.h"

#include <memory>
#include <utility>

#include "cyber/runtime/process_runtime.h"
#include "cyber/runtime/runtime_scope.h"

namespace cyber {
namespace scheduler {

namespace {

// The process runtime's scheduler, holding the runtime: an aliasing
// shared_ptr, so whoever holds the scheduler keeps its whole runtime (and
// the timer system its SleepFor arms) alive.
std::shared_ptr<Scheduler> SchedulerOf(std::shared_ptr<Runtime> runtime) {
  Scheduler* s = runtime->scheduler();
  return std::shared_ptr<Scheduler>(std::move(runtime), s);
}

}  // namespace

std::shared_ptr<Scheduler> DefaultSchedulerRef() {
  return SchedulerOf(ProcessRuntimeRef());
}

Scheduler* DefaultScheduler() { return ProcessRuntime()->scheduler(); }

Scheduler* StartDefaultScheduler() { return StartProcessRuntime()->scheduler(); }

void ShutdownDefaultScheduler() { ShutdownProcessRuntime(); }

Scheduler* CurrentScheduler() {
  if (Scheduler* s = FromCurrentRuntime(&RuntimeScope::scheduler)) return s;
  return DefaultScheduler();
}

std::shared_ptr<Scheduler> CurrentSchedulerRef() {
  if (Scheduler* s = FromCurrentRuntime(&RuntimeScope::scheduler)) {
    // Its runtime outlives its own code: nothing to hold.
    return std::shared_ptr<Scheduler>(std::shared_ptr<Scheduler>(), s);
  }
  return DefaultSchedulerRef();
}

}  // namespace scheduler
}  // namespace cyber
