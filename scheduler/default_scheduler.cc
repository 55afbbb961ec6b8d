#include "scheduler/default_scheduler.h"

#include <mutex>
#include <thread>
#include <vector>

#include "cyber/common/log.h"
#include "gflags/gflags.h"
#include "scheduler/config/scheduler_config.h"

DEFINE_string(scheduler_conf, "",
              "scheduler conf file (protobuf text format, Cyber RT shape); "
              "empty: one processor group with one processor per core");
DEFINE_int32(scheduler_processors, 0,
             "processors of the default group when no conf is given "
             "(0: one per core)");
DEFINE_int32(routine_stack_size, 256 * 1024,
             "usable stack bytes per coroutine (a guard page is added)");

namespace cyber {
namespace scheduler {

namespace {

std::mutex g_mu;
Scheduler* g_scheduler = nullptr;  // guarded by g_mu
// Shut-down schedulers stay allocated: Timers and tasks may still point at
// them (they refuse new work). Reachable, so not reported as leaks.
std::vector<Scheduler*>* g_retired = new std::vector<Scheduler*>();

Scheduler::Options OptionsFromFlags() {
  Scheduler::Options o;
  o.name = "default";
  if (FLAGS_routine_stack_size >= static_cast<int>(kMinStackSize)) {
    o.stack_size = static_cast<size_t>(FLAGS_routine_stack_size);
  } else {
    AERROR << "flag --routine_stack_size: " << FLAGS_routine_stack_size
           << " is below the minimum " << kMinStackSize << "; using "
           << o.stack_size;
  }
  if (!FLAGS_scheduler_conf.empty()) {
    auto config = LoadSchedulerConfig(FLAGS_scheduler_conf);
    if (config.ok()) {
      o.config = *std::move(config);
      return o;
    }
    AERROR << "flag --scheduler_conf: " << config.status().message()
           << "; using the default configuration";
  }
  int n = FLAGS_scheduler_processors;
  if (n <= 0) n = static_cast<int>(std::thread::hardware_concurrency());
  o.config = DefaultSchedulerConfig(n > 0 ? n : 1);
  return o;
}

}  // namespace

Scheduler* DefaultScheduler() {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_scheduler == nullptr) g_scheduler = new Scheduler(OptionsFromFlags());
  return g_scheduler;
}

void ShutdownDefaultScheduler() {
  Scheduler* s = nullptr;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    s = g_scheduler;
    if (s == nullptr) return;
    g_retired->push_back(s);
    g_scheduler = nullptr;
  }
  s->Shutdown();
}

}  // namespace scheduler
}  // namespace cyber
