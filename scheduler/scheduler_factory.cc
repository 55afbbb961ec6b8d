#include "scheduler/scheduler_factory.h"

#include <utility>

#include "cyber/common/log.h"
#include "scheduler/default_scheduler.h"

namespace cyber {
namespace scheduler {
namespace {

bool Report(const absl::Status& status) {
  if (!status.ok()) AERROR << status.message();
  return status.ok();
}

}  // namespace

bool CyberSchedulerApi::CreateTask(std::function<void()> func, const std::string& name) {
  return Report(CurrentSchedulerRef()->CreateTask(name, std::move(func)));
}

bool CyberSchedulerApi::NotifyTask(const std::string& name) {
  return Report(CurrentSchedulerRef()->NotifyTask(name));
}

bool CyberSchedulerApi::RemoveTask(const std::string& name) {
  return Report(CurrentSchedulerRef()->RemoveTask(name));
}

Scheduler* CyberSchedulerApi::scheduler() const { return CurrentScheduler(); }

CyberSchedulerApi* Instance() {
  static CyberSchedulerApi api;
  return &api;
}

}  // namespace scheduler
}  // namespace cyber
