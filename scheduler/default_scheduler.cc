#include "scheduler/default_scheduler.h"

#include <mutex>
#include <thread>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "cyber/common/log.h"
#include "gflags/gflags.h"
#include "cyber/runtime/runtime_scope.h"
#include "scheduler/config/scheduler_config.h"
#include "timer/default_timer_system.h"

DEFINE_string(scheduler_conf, "",
              "scheduler conf file (protobuf text format, Cyber RT shape); "
              "empty: one processor group with one processor per core");
DEFINE_int32(scheduler_processors, 0,
             "processors of the default group when no conf is given "
             "(0: one per core)");
DEFINE_string(scheduler_cpuset, "",
              "CPUs for the default group's processors when no conf is given, "
              "e.g. \"0-3\" (empty: no pinning)");
DEFINE_string(scheduler_affinity, "range",
              "\"range\" (each processor on any of --scheduler_cpuset) or "
              "\"1to1\" (processor i on the i-th CPU)");
DEFINE_string(scheduler_policy, "SCHED_OTHER",
              "Linux policy of the default group's processors: SCHED_OTHER, "
              "SCHED_FIFO or SCHED_RR (real-time needs privileges; refused "
              "settings are logged and skipped)");
DEFINE_int32(scheduler_priority, 0,
             "nice value (SCHED_OTHER) or real-time priority 1..99 "
             "(SCHED_FIFO/RR) of the default group's processors");
DEFINE_int32(routine_stack_size, 256 * 1024,
             "usable stack bytes per coroutine (a guard page is added)");
DEFINE_bool(scheduler_anticipate_timers, true,
            "an idle processor wakes shortly before the timing wheel's next "
            "event and spins for the hand-off, so a timer callback does not "
            "wait for a second wake-up (costs CPU per event; "
            "Scheduler::Options::anticipate_timer_work)");

namespace cyber {
namespace scheduler {

namespace {

std::mutex g_mu;
// The process scheduler, shared with the Nodes (and their readers) that
// deliver on it and with each cyber::Async call in flight outside any
// runtime, so one replaced after a shutdown is freed when the last of them
// lets go, never while one of them may still use it. The holder itself is
// never destroyed: no scheduler is torn down by static destruction at exit.
std::shared_ptr<Scheduler>& g_scheduler = *new std::shared_ptr<Scheduler>();  // g_mu
// g_scheduler is shut down (kept, refusing work, until the next start).
bool g_shut_down = false;  // guarded by g_mu

Scheduler::Options OptionsFromFlags() {
  Scheduler::Options o;
  o.name = "default";
  o.anticipate_timer_work = FLAGS_scheduler_anticipate_timers;
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
  if (n < 0) {
    AERROR << "flag --scheduler_processors: " << n
           << " must be >= 0 (0: one per core); using one per core";
  }
  if (n <= 0) n = static_cast<int>(std::thread::hardware_concurrency());
  if (n <= 0) n = 1;
  // The flags describe one group; they go through the conf parser, so they
  // get its validation and its error messages.
  std::string text = absl::StrCat(
      "classic_conf { groups { name: \"default\" processor_num: ", n,
      " affinity: \"", absl::CEscape(FLAGS_scheduler_affinity),
      "\" processor_policy: \"", absl::CEscape(FLAGS_scheduler_policy),
      "\" processor_prio: ", FLAGS_scheduler_priority);
  if (!FLAGS_scheduler_cpuset.empty()) {
    absl::StrAppend(&text, " cpuset: \"", absl::CEscape(FLAGS_scheduler_cpuset), "\"");
  }
  absl::StrAppend(&text, " } }");
  auto config = ParseSchedulerConfig(text, "--scheduler_* flags");
  if (config.ok()) {
    o.config = *std::move(config);
  } else {
    AERROR << config.status().message() << "; using the default configuration";
    o.config = DefaultSchedulerConfig(n);
  }
  return o;
}

}  // namespace

namespace {
// Makes the process scheduler, wired at birth: timer callbacks run on it,
// and SleepFor arms its wheel. (A scheduler without a wheel made SleepFor
// in an Async task abort the process when Init was never called.)
std::shared_ptr<Scheduler> MakeLocked() {
  auto s = std::make_shared<Scheduler>(OptionsFromFlags());
  s->SetTimerDriver(timer::InstallDefaultTimerSystem(s.get()));
  return s;
}
}  // namespace

std::shared_ptr<Scheduler> DefaultSchedulerRef() {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_scheduler == nullptr) g_scheduler = MakeLocked();
  return g_scheduler;
}

Scheduler* DefaultScheduler() { return DefaultSchedulerRef().get(); }

Scheduler* StartDefaultScheduler() {
  std::shared_ptr<Scheduler> replaced;  // freed outside g_mu if unused
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_scheduler == nullptr || g_shut_down) {
    replaced = std::move(g_scheduler);
    g_scheduler = MakeLocked();
    g_shut_down = false;
  }
  return g_scheduler.get();
}

Scheduler* CurrentScheduler() {
  if (const RuntimeScope* scope = CurrentRuntimeScope()) {
    if (Scheduler* s = scope->scheduler.load(std::memory_order_acquire)) {
      return s;
    }
  }
  return DefaultScheduler();
}

std::shared_ptr<Scheduler> CurrentSchedulerRef() {
  if (const RuntimeScope* scope = CurrentRuntimeScope()) {
    if (Scheduler* s = scope->scheduler.load(std::memory_order_acquire)) {
      // Its runtime outlives its own code: nothing to hold.
      return std::shared_ptr<Scheduler>(std::shared_ptr<Scheduler>(), s);
    }
  }
  return DefaultSchedulerRef();
}

void ShutdownDefaultScheduler() {
  std::shared_ptr<Scheduler> s;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    if (g_scheduler == nullptr || g_shut_down) return;
    s = g_scheduler;
    g_shut_down = true;
  }
  // Its timers first (no new callbacks), then its routines and processors.
  timer::ShutdownDefaultTimerSystem();
  s->Shutdown();
}

}  // namespace scheduler
}  // namespace cyber
