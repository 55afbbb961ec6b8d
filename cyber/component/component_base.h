// ComponentBase: what every component launched from a graph (.dag) file has
// in common, and what the launcher (cyber/mainboard) drives.
//
// Why: robot modules are written as components the launcher creates by class
// name, initializes from their graph entry, runs (periodically, or per
// message) and shuts down. User code implements Init() and Proc(); the
// launcher calls Initialize() (which wires timers/readers, then calls
// Init()) and Shutdown() (which stops the timer or readers synchronously
// before the component is destroyed, so no Proc() ever runs on a dead
// object).
//
// Threads: Initialize()/Shutdown() from the launcher's thread; Proc() runs in
// scheduler routines, never concurrently with itself; Stats() from any thread.

#ifndef CYBER_COMPONENT_COMPONENT_BASE_H_
#define CYBER_COMPONENT_COMPONENT_BASE_H_

#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "boost/context/fiber.hpp"  // forced_unwind, which RunProc passes on
#include "cyber/dag/dag_config.h"
#include "cyber/node/node.h"
#include "cyber/runtime/runtime.h"
#include "google/protobuf/message.h"
#include "scheduler/scheduler.h"
#include "timer/dispatcher.h"  // ExecutionCancelled, which RunProc passes on
#include "timer/timer_owner.h"
#include "timer/timer_system.h"

namespace cyber {

// Told of every Proc() call of the components whose context names it (a
// simulated graph's trace, graph tests). Called in the routine that ran
// Proc(), right after it returned, under no lock of the component: it must
// be thread-safe and quick.
class ProcObserver {
 public:
  virtual ~ProcObserver() = default;
  virtual void OnProc(const std::string& component, bool ok) = 0;
};

// What a component runs on: its runtime (clock, timer system, scheduler,
// bus) and who is told of its Proc() calls.
struct ComponentContext {
  // Null: the process runtime (cyber/runtime/process_runtime.h), which is
  // what mainboard's components use. REQUIRES: outlives the component.
  Runtime* runtime = nullptr;
  ProcObserver* observer = nullptr;  // null: none
};

// What the launcher's status line and summary show.
struct ComponentStats {
  std::string name;
  std::string class_name;
  bool timer = false;
  // False for a Component<> (no readers, no Proc()): the Proc() counts stay
  // 0 and the summary shows `-` for them.
  bool has_proc = true;
  uint64_t procs = 0;          // Proc() calls, those that threw included
  uint64_t proc_failures = 0;  // Proc() returned false or threw
  uint64_t exceptions = 0;     // of proc_failures: Proc() threw
  // Timer components: configured rate and what was achieved since start.
  double configured_hz = 0;
  double achieved_hz = 0;
  absl::Duration lateness_p99;
  absl::Duration lateness_max;
  uint64_t overruns = 0;
  uint64_t missed_periods = 0;
  uint64_t early_fires = 0;
  // Message components: messages dropped because Proc() fell behind.
  uint64_t dropped = 0;
  // Multi-channel components: first-channel messages that arrived before
  // every other channel had delivered one, so Proc() was not called.
  uint64_t unfused = 0;
  // Every Timer the component's Init() configured (a TimerComponent's own
  // timer is the component's row, not one of these), in the order made,
  // with its period and statistics (fires, overruns, missed periods).
  // Timers made later (a per-message timeout in Proc()) are not listed.
  std::vector<timer::OwnedTimer> timers;
};

// Checks a gflags flag file (a component's flag_file_path) without setting
// anything: every line that is not empty or a `#` comment must be
// --name=value (or -name=value; --name / --noname for a boolean) naming a
// flag this process defines, with a value of the flag's type. gflags itself
// skips anything else silently. Errors name the file, the line and its text:
//   tuning.flags:3: "--imu_rate_hz=fast": value "fast" is not a valid double
//   (flag --imu_rate_hz)
// NotFound if the file cannot be opened, InvalidArgument for a bad line.
absl::Status CheckFlagFile(const std::string& path);

class ComponentBase {
 public:
  virtual ~ComponentBase();
  ComponentBase(const ComponentBase&) = delete;
  ComponentBase& operator=(const ComponentBase&) = delete;

  // --- User code ----------------------------------------------------------
  // Called once by Initialize(); false refuses the component (the launcher
  // stops and reports it).
  virtual bool Init() = 0;
  // Called once by Shutdown(), after Proc() has stopped for good.
  virtual void Clear() {}

  // --- Launcher side ------------------------------------------------------
  // Sets the component up from its graph entry and calls Init(). The entry
  // kind must match the class: a TimerComponent from `timer_components`, a
  // Component<M0, ...> from `components` (one `readers` entry per message
  // type), a Component<> from `components` with no `readers`; a mismatch is
  // an error naming both.
  virtual absl::Status Initialize(const dag::ComponentSpec& spec,
                                  const ComponentContext& context);
  virtual absl::Status Initialize(const dag::TimerComponentSpec& spec,
                                  const ComponentContext& context);
  // Stops the timer / readers synchronously, then calls Clear(). Idempotent.
  virtual void Shutdown() = 0;
  virtual ComponentStats Stats() const = 0;

  const std::string& name() const { return name_; }
  const std::string& class_name() const { return class_name_; }
  // The files named by the graph entry ("" if none), resolved.
  const std::string& ConfigFilePath() const { return config_file_path_; }
  const std::string& FlagFilePath() const { return flag_file_path_; }
  // The node the component writes and reads through (valid in Init()).
  const std::shared_ptr<Node>& node() const { return node_; }

  // Reads the component's config file (`config_file_path` of its graph
  // entry) into `config`: protobuf text format, or the binary wire format
  // if the path ends in ".bin". Errors name the component, the file and,
  // for text, the line and column: FailedPrecondition if the entry has no
  // config_file_path, NotFound if the file cannot be read, InvalidArgument
  // if it does not parse as `config`'s type.
  absl::Status ReadProtoConfig(google::protobuf::Message* config) const;
  // Cyber RT's spelling: false (after an AERROR with the same message) on
  // any of the errors above.
  template <typename T>
  bool GetProtoConfig(T* config) const {
    const absl::Status status = ReadProtoConfig(config);
    if (!status.ok()) LogConfigError(status);
    return status.ok();
  }

 protected:
  ComponentBase() = default;

  // What every kind of component reports the same way: its identity and
  // the Proc() counts RunProc keeps. Stats() adds what its kind knows.
  ComponentStats BaseStats() const;

  // Calls the user's Init() as the owner of the timers it makes: each
  // Timer it configures is listed in Stats().timers (timer/timer_owner.h).
  bool RunInit();

  // Sets the identity, loads the flag file (gflags; checked first with
  // CheckFlagFile, an error sets nothing) and creates the node.
  absl::Status SetUp(const std::string& class_name, const std::string& name,
                     const std::string& config_file_path,
                     const std::string& flag_file_path,
                     const ComponentContext& context);
  // The same from a graph's entry of either kind (dag::ComponentSpec,
  // dag::TimerComponentSpec).
  template <typename Spec>
  absl::Status SetUpFrom(const Spec& spec, const ComponentContext& context) {
    return SetUp(spec.class_name, spec.name, spec.config_file_path,
                 spec.flag_file_path, context);
  }
  // Calls the user's Proc() through `proc` (returning its bool) and counts
  // the call in Stats(): ok, returned false, or threw. An exception is
  // caught here, never reaching the reader or timer that called, and is a
  // failed call; the scheduler cancelling the routine
  // (timer::ExecutionCancelled) and Boost's forced unwinding pass through,
  // uncounted. Failures are logged (AERROR) with the component, its class,
  // the exception's what() and the running counts: each of the first
  // kFailuresLoggedEach, then every kFailuresLoggedEvery-th, so a component
  // failing at sensor rates neither floods the log nor goes quiet.
  template <typename F>
  void RunProc(const F& proc) {
    bool ok = false;
    try {
      ok = proc();
    } catch (const timer::ExecutionCancelled&) {
      throw;
    } catch (const boost::context::detail::forced_unwind&) {
      throw;
    } catch (const std::exception& e) {
      RecordThrow(e.what());
      return;
    } catch (...) {
      RecordThrow(nullptr);
      return;
    }
    RecordProc(ok);
  }
  static constexpr uint64_t kFailuresLoggedEach = 10;
  static constexpr uint64_t kFailuresLoggedEvery = 100;

  // Only Proc() (through RunProc) writes these; Stats() reads them.
  std::atomic<uint64_t> procs_{0};
  std::atomic<uint64_t> proc_failures_{0};
  std::atomic<uint64_t> exceptions_{0};
  std::atomic<bool> shut_down_{false};
  // Cyber RT's member: component code writes node_->CreateWriter<T>(...).
  // Set by SetUp() before Init(); user code must not replace it.
  std::shared_ptr<Node> node_;

 private:
  void LogConfigError(const absl::Status& status) const;
  // Counts a Proc() that returned `ok`, or that threw (`what`: its what(),
  // null for an exception not derived from std::exception).
  void RecordProc(bool ok);
  void RecordThrow(const char* what);
  // Logs the failure just counted, if its number is one RunProc logs.
  void LogFailure(const std::string& what_happened) const;

  std::string name_;
  std::string class_name_;
  std::string config_file_path_;
  std::string flag_file_path_;
  ProcObserver* observer_ = nullptr;
  // The timers Init() made, kept (their statistics readable) until the
  // component is destroyed.
  timer::TimerOwner timers_;
};

}  // namespace cyber

#endif  // CYBER_COMPONENT_COMPONENT_BASE_H_
