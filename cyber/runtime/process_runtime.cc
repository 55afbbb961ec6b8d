#include "cyber/runtime/process_runtime.h"

#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "cyber/common/log.h"
#include "cyber/common/runtime_scope.h"
#include "gflags/gflags.h"
#include "scheduler/config/scheduler_config.h"
#include "scheduler/routine_stack.h"

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
            "the tick thread hands each event's timer callbacks over a "
            "little before the event and an idle processor sleeps on its "
            "own timer until it, so a callback does not wait for a second "
            "wake-up in series (no spinning; "
            "Scheduler::Options::anticipate_timer_work)");

namespace cyber {

namespace {

std::mutex g_mu;
// The process runtime (see the header: shared, never destroyed at exit).
std::shared_ptr<Runtime>& g_runtime = *new std::shared_ptr<Runtime>();  // g_mu
// g_runtime is shut down (kept, refusing work, until the next start).
bool g_shut_down = false;  // guarded by g_mu
// What makes the transport to other processes (null: channels stay in the
// process). Written before main by the linked transport's registration.
std::atomic<ProcessRemoteMaker> g_remote_maker{nullptr};

// The process scheduler's processor groups, from the flags.
scheduler::SchedulerConfig ConfigFromFlags() {
  if (!FLAGS_scheduler_conf.empty()) {
    auto config = scheduler::LoadSchedulerConfig(FLAGS_scheduler_conf);
    if (config.ok()) return *std::move(config);
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
  auto config = scheduler::ParseSchedulerConfig(text, "--scheduler_* flags");
  if (config.ok()) return *std::move(config);
  AERROR << config.status().message() << "; using the default configuration";
  return scheduler::DefaultSchedulerConfig(n);
}

Runtime::Options OptionsFromFlags() {
  Runtime::Options o;
  o.name = "default";  // the scheduler's name, in its errors and threads
  o.tick_thread_name = "timer-tick";
  o.anticipate_timer_work = FLAGS_scheduler_anticipate_timers;
  if (FLAGS_routine_stack_size >= static_cast<int>(scheduler::kMinStackSize)) {
    o.stack_size = static_cast<size_t>(FLAGS_routine_stack_size);
  } else {
    AERROR << "flag --routine_stack_size: " << FLAGS_routine_stack_size
           << " is below the minimum " << scheduler::kMinStackSize
           << "; using " << o.stack_size;
  }
  o.config = ConfigFromFlags();
  if (const ProcessRemoteMaker maker =
          g_remote_maker.load(std::memory_order_acquire)) {
    o.remote = maker();
  }
  return o;
}

// Makes the process runtime and publishes its timer system for the rule's
// hint (cyber/common/runtime_scope.h).
std::shared_ptr<Runtime> MakeLocked() {
  auto runtime = std::make_shared<Runtime>(OptionsFromFlags());
  PublishProcessTimerSystem(runtime->timers()->system().get());
  return runtime;
}

// Rule 2 of cyber/common/runtime_scope.h: the process runtime's scope,
// holding the runtime.
std::shared_ptr<const RuntimeScope> ProcessScope() {
  std::shared_ptr<Runtime> runtime = ProcessRuntimeRef();
  const RuntimeScope* const scope = runtime->scope();
  return std::shared_ptr<const RuntimeScope>(std::move(runtime), scope);
}

// Before main: from here on, code outside every runtime's scope uses the
// process runtime.
const bool g_registered = [] {
  SetProcessRuntimeMaker(&ProcessScope);
  return true;
}();

}  // namespace

void SetProcessRemoteMaker(ProcessRemoteMaker maker) {
  g_remote_maker.store(maker, std::memory_order_release);
}

std::shared_ptr<Runtime> ProcessRuntimeRef() {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_runtime == nullptr) g_runtime = MakeLocked();
  return g_runtime;
}

Runtime* ProcessRuntime() { return ProcessRuntimeRef().get(); }

Runtime* StartProcessRuntime() {
  std::shared_ptr<Runtime> replaced;  // freed after g_mu, if nothing holds it
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_runtime == nullptr || g_shut_down) {
    replaced = std::move(g_runtime);
    g_runtime = MakeLocked();
    g_shut_down = false;
  }
  return g_runtime.get();
}

void ShutdownProcessRuntime() {
  std::shared_ptr<Runtime> runtime;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    if (g_runtime == nullptr || g_shut_down) return;
    runtime = g_runtime;
    g_shut_down = true;
  }
  // Its transport, its timers (closed: a timer's Schedule() fails from now
  // on), then its scheduler.
  PublishProcessTimerSystem(nullptr);
  runtime->Shutdown();
}

}  // namespace cyber
