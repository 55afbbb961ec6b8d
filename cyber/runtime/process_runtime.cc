#include "cyber/runtime/process_runtime.h"

#include <errno.h>  // program_invocation_short_name

#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "cyber/common/log.h"
#include "cyber/transport/channel_bus.h"
#include "cyber/transport/dds/dds_transport.h"
#include "gflags/gflags.h"
#include "scheduler/config/scheduler_config.h"
#include "scheduler/routine_stack.h"
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
DEFINE_bool(in_process_only, false,
            "keep every channel inside this process: no DDS participant, nothing "
            "on the network or in /dev/shm (default: protobuf channels also reach "
            "the other processes of the DDS domain, CYBER_DOMAIN_ID)");
DEFINE_string(dds_profile_file, "",
              "a Fast-DDS XML profile file whose default participant profile the "
              "transport starts from (e.g. DDS Security's properties); empty: no "
              "profile file is read at all");
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

// The DDS transport (started by the first protobuf channel), unless
// --in_process_only. A malformed CYBER_DOMAIN_ID or CYBER_IP is reported
// and the process stays in-process: it runs, and says why it is alone.
std::shared_ptr<RemoteTransport> RemoteFromFlags() {
  if (FLAGS_in_process_only) return nullptr;
  absl::StatusOr<dds::DdsTransportOptions> options =
      dds::DdsTransportOptionsFromEnvironment(program_invocation_short_name);
  if (!options.ok()) {
    AERROR << options.status().message()
           << "; channels stay inside this process";
    return nullptr;
  }
  options->profile_file = FLAGS_dds_profile_file;
  return std::make_shared<dds::DdsTransport>(*std::move(options));
}

Runtime::Options OptionsFromFlags() {
  Runtime::Options o;
  o.name = "default";  // the scheduler's name, in its errors and threads
  o.tick_thread_name = "timer-tick";
  o.bus = ChannelBus::Default();
  o.anticipate_timer_work = FLAGS_scheduler_anticipate_timers;
  if (FLAGS_routine_stack_size >= static_cast<int>(scheduler::kMinStackSize)) {
    o.stack_size = static_cast<size_t>(FLAGS_routine_stack_size);
  } else {
    AERROR << "flag --routine_stack_size: " << FLAGS_routine_stack_size
           << " is below the minimum " << scheduler::kMinStackSize
           << "; using " << o.stack_size;
  }
  o.config = ConfigFromFlags();
  o.remote = RemoteFromFlags();
  return o;
}

// Makes the process runtime, its timer system registered as the process
// one: a plain Timer started from now on runs its callbacks on the
// runtime's scheduler, and SleepFor in an Async task arms its wheel.
std::shared_ptr<Runtime> MakeLocked() {
  auto runtime = std::make_shared<Runtime>(OptionsFromFlags());
  timer::InstallDefaultTimerSystem(runtime->timers());
  return runtime;
}

}  // namespace

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
  // No timer binds to its system any more, which is closed (and the
  // fallback's, if timers ran there before), then its scheduler.
  timer::ShutdownDefaultTimerSystem();
  runtime->Shutdown();
}

}  // namespace cyber
