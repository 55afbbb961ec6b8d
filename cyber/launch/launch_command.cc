#include "cyber/launch/launch_command.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <memory>
#include <random>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "cyber/common/terminal_keys.h"
#include "cyber/launch/graph_readiness.h"
#include "cyber/launch/launch_summary.h"
#include "cyber/launch/pid_file.h"
#include "cyber/launch/supervisor.h"
#include "cyber/lockstep/coordinator_driver.h"
#include "cyber/lockstep/recording_member.h"
#include "cyber/transport/dds/dds_transport.h"

namespace cyber {
namespace launch {
namespace {

bool IsExecutableFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

std::string Directory(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

// The supervisor and the lockstep coordinator the signal handlers stop
// (one RunStart per process).
std::atomic<Supervisor*> g_supervisor{nullptr};
std::atomic<lockstep::CoordinatorDriver*> g_coordinator{nullptr};

void OnStopSignal(int) {
  lockstep::CoordinatorDriver* c = g_coordinator.load();
  if (c != nullptr) c->RequestStop();
  Supervisor* s = g_supervisor.load();
  if (s != nullptr) s->RequestStop();
}

void Error(const std::string& message) {
  std::fprintf(stderr, "cyber_launch: %s\n", message.c_str());
}

// The process name a --recording plays under.
constexpr char kRecordingProcess[] = "recording";

// The lockstep coordinator of a --clock=simulated launch, on its own
// thread while the supervisor runs the processes.
class LockstepRun {
 public:
  static absl::StatusOr<std::unique_ptr<LockstepRun>> Start(const LaunchPlan& plan,
                                                            const StartOptions& options) {
    lockstep::CoordinatorDriverOptions o;
    for (const ProcessPlan& p : plan.processes) {
      if (!options.recording.empty() && p.name == kRecordingProcess) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--recording: the launch file has a process named \"", kRecordingProcess,
            "\", the name the recording plays under"));
      }
      o.coordinator.processes.push_back(p.name);
    }
    if (!options.recording.empty()) o.coordinator.processes.push_back(kRecordingProcess);
    o.coordinator.end_ns = absl::ToInt64Nanoseconds(options.run_for);
    o.coordinator.join_deadline = options.join_deadline;
    o.coordinator.step_deadline = options.step_deadline;
    std::random_device rd;
    o.coordinator.run_id = (static_cast<uint64_t>(rd()) << 32 | rd()) | 1;
    o.speed = options.speed;
    o.progress = [](const std::string& line) {
      std::fprintf(stderr, "cyber_launch: %s\n", line.c_str());
    };
    absl::StatusOr<dds::DdsTransportOptions> dds =
        dds::DdsTransportOptionsFromEnvironment("cyber_launch");
    if (!dds.ok()) return dds.status();
    dds::SetFewerWakeups(&*dds);  // as the lockstep processes
    // The recording plays from a participant of its own, as a process.
    std::shared_ptr<dds::DdsTransport> player_transport;
    std::unique_ptr<lockstep::RecordingMember> player;
    if (!options.recording.empty()) {
      dds::DdsTransportOptions p = *dds;
      p.process_name = kRecordingProcess;
      player_transport = std::make_shared<dds::DdsTransport>(p);
      lockstep::RecordingMemberOptions ro;
      ro.path = options.recording;
      ro.channels = options.recording_channels;
      ro.process = kRecordingProcess;
      absl::StatusOr<std::unique_ptr<lockstep::RecordingMember>> opened =
          lockstep::RecordingMember::Open(player_transport, ro);
      if (!opened.ok()) {
        player_transport->Shutdown();
        return opened.status();
      }
      player = *std::move(opened);
    }
    auto transport = std::make_shared<dds::DdsTransport>(*dds);
    absl::StatusOr<std::unique_ptr<lockstep::CoordinatorDriver>> driver =
        lockstep::CoordinatorDriver::Start(transport, o);
    if (!driver.ok()) {
      transport->Shutdown();
      player.reset();
      if (player_transport) player_transport->Shutdown();
      return driver.status();
    }
    std::unique_ptr<LockstepRun> run(new LockstepRun(transport, *std::move(driver)));
    run->player_transport_ = std::move(player_transport);
    run->player_ = std::move(player);
    if (run->player_ != nullptr) {
      if (absl::Status s = run->player_->Join(); !s.ok()) return s;
      std::fprintf(stderr, "cyber_launch: recording %s plays %llu messages (%s) as process \"%s\"\n",
                   options.recording.c_str(), static_cast<unsigned long long>(run->player_->total()),
                   absl::StrJoin(options.recording_channels, ", ").c_str(), kRecordingProcess);
    }
    return run;
  }
  ~LockstepRun() {
    if (thread_.joinable()) thread_.join();
    StopKeys();
    player_.reset();
    if (player_transport_) player_transport_->Shutdown();
    driver_.reset();
    transport_->Shutdown();
  }
  lockstep::CoordinatorDriver* driver() { return driver_.get(); }
  void Run(bool paused) {
    if (paused) driver_->Pause();
    thread_ = std::thread([this] {
      outcome_ = driver_->Run();
      ended_.store(true);
    });
    keys_ = std::thread([this] { TakeKeys(); });
  }
  // Ends the key reading and restores the terminal (also done by Wait()).
  void StopKeys() {
    ended_keys_.store(true);
    if (keys_.joinable()) keys_.join();
  }
  // Waits for the run's end (the supervisor has ended: every process is
  // gone, so the coordinator ends too, within its step deadline).
  const lockstep::RunOutcome& Wait() {
    if (thread_.joinable()) thread_.join();
    StopKeys();
    return outcome_;
  }

 private:
  LockstepRun(std::shared_ptr<dds::DdsTransport> transport,
              std::unique_ptr<lockstep::CoordinatorDriver> driver)
      : transport_(std::move(transport)), driver_(std::move(driver)) {}
  // From a terminal: space pauses and resumes, s lets one step out; each
  // key answers with a line on stderr. Not a terminal: no keys.
  void TakeKeys() {
    TerminalKeys keys;
    if (!keys.active()) {
      // No keys after all (in the background of a shell, a terminal that
      // cannot be set): a run held by --paused would never go on.
      if (driver_->paused()) {
        Error("lockstep: no keys from this terminal (in the background?): --paused ignored, running");
        driver_->Resume();
      }
      return;
    }
    std::fprintf(stderr, "cyber_launch: lockstep keys: space pauses and resumes, s runs one step while paused\n");
    // A key is answered with where the run is: at once for space, once
    // the step it let out was granted for s (the first may wait for every
    // process to join).
    bool answer = false;
    uint64_t stepped_from = 0;
    while (!ended_.load() && !ended_keys_.load()) {
      const char key = keys.Read(absl::Milliseconds(50));
      if (key == ' ') {
        driver_->TogglePause();
        answer = true;
      } else if (key == 's' && driver_->paused()) {
        if (!answer) stepped_from = driver_->step();
        driver_->Step();
        answer = true;
      }
      if (!answer) continue;
      if (driver_->paused() && driver_->step() == stepped_from && key != ' ') continue;
      answer = false;
      stepped_from = driver_->step();
      std::fprintf(stderr, "cyber_launch: lockstep %s at step %llu (%s simulated)%s\n",
                   driver_->paused() ? "paused" : "running",
                   static_cast<unsigned long long>(driver_->step()),
                   absl::FormatDuration(absl::Nanoseconds(driver_->instant_ns())).c_str(),
                   driver_->paused() ? "; space resumes, s runs one step" : "");
    }
  }
  std::shared_ptr<dds::DdsTransport> transport_;
  std::unique_ptr<lockstep::CoordinatorDriver> driver_;
  std::shared_ptr<dds::DdsTransport> player_transport_;
  std::unique_ptr<lockstep::RecordingMember> player_;
  std::thread thread_;
  std::thread keys_;
  std::atomic<bool> ended_{false};       // the run is over
  std::atomic<bool> ended_keys_{false};  // no more keys
  lockstep::RunOutcome outcome_;
};

}  // namespace

absl::StatusOr<std::string> FindMainboard(const std::string& flag, const std::string& self) {
  if (!flag.empty()) {
    if (IsExecutableFile(flag)) return flag;
    return absl::NotFoundError(
        absl::StrCat("--mainboard=", flag, ": not an executable file"));
  }
  const std::string dir = Directory(self);
  const std::string beside = absl::StrCat(dir, "/mainboard");
  const std::string bazel_bin = absl::StrCat(dir, "/../../mainboard/mainboard");
  if (IsExecutableFile(beside)) return beside;
  if (IsExecutableFile(bazel_bin)) return bazel_bin;
  const char* path = getenv("PATH");
  for (absl::string_view d : absl::StrSplit(path != nullptr ? path : "", ':', absl::SkipEmpty())) {
    const std::string candidate = absl::StrCat(d, "/mainboard");
    if (IsExecutableFile(candidate)) return candidate;
  }
  return absl::NotFoundError(absl::StrCat(
      "no mainboard found: not beside cyber_launch (", beside, "), not in bazel-bin (", bazel_bin,
      "), not on PATH; give one with --mainboard=PATH (a graph's components must be linked into "
      "it, e.g. bazel-bin/examples/sensor_polling/mainboard)"));
}

std::vector<std::string> MainboardCommand(const std::string& mainboard, const ProcessPlan& process,
                                          bool lockstep) {
  std::vector<std::string> argv = {mainboard, absl::StrCat("--process_name=", process.name)};
  if (lockstep) {
    argv.push_back("--clock=simulated");
    argv.push_back("--lockstep");
  }
  for (const std::string& dag : process.dag_files) {
    argv.push_back("-d");
    argv.push_back(dag);
  }
  return argv;
}

int RunStart(const StartOptions& options) {
  const bool simulated = options.clock == "simulated";
  if (options.clock != "steady" && !simulated) {
    Error(absl::StrCat("--clock=", options.clock, ": not steady or simulated"));
    return 2;
  }
  if (simulated && options.run_for <= absl::ZeroDuration()) {
    Error("--clock=simulated needs --run_for (the simulated time to run, e.g. --run_for=60s)");
    return 2;
  }
  if (!simulated && options.run_for > absl::ZeroDuration()) {
    Error("--run_for is for --clock=simulated (on the real clock, stop with Ctrl-C or "
          "`cyber_launch stop`)");
    return 2;
  }
  if ((!options.recording.empty() || !options.recording_channels.empty()) && !simulated) {
    Error("--recording is for --clock=simulated (a recording plays into a lockstep run)");
    return 2;
  }
  if (options.recording.empty() != options.recording_channels.empty()) {
    Error(options.recording.empty() ? "--recording_channels without --recording"
                                    : "--recording needs --recording_channels (the channels to play)");
    return 2;
  }
  if (options.paused && (!simulated || !isatty(STDIN_FILENO))) {
    Error(!simulated ? "--paused is for --clock=simulated"
                     : "--paused needs a terminal on stdin (its keys resume the run)");
    return 2;
  }
  absl::StatusOr<LaunchPlan> plan = ParseLaunchFile(options.launch_file);
  if (!plan.ok()) {
    Error(std::string(plan.status().message()));
    return 2;
  }
  if (simulated) {
    // A restarted process is a new one to the coordinator, refused: the
    // run fails naming the process instead. Readiness is the lockstep
    // join's: every process starts at once, and the first instant is
    // granted only when all have joined and every writer has matched every
    // reader (a process waiting for another's writer before starting would
    // wait for ever: nothing runs before the first grant).
    for (ProcessPlan& p : plan->processes) {
      p.exception_handler = ExceptionHandler::kNone;
      p.start_after.clear();
      p.wait_for_writer.clear();
    }
  }
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  self[n > 0 ? n : 0] = '\0';
  absl::StatusOr<std::string> mainboard = FindMainboard(options.mainboard, self);
  if (!mainboard.ok()) {
    Error(std::string(mainboard.status().message()));
    return 2;
  }
  std::string log_dir = options.log_dir;
  if (log_dir.empty()) {
    const char* tmp = getenv("TMPDIR");
    std::string templ = absl::StrCat(tmp != nullptr && tmp[0] != '\0' ? tmp : "/tmp",
                                     "/cyber_launch.XXXXXX");
    if (mkdtemp(templ.data()) == nullptr) {
      Error(absl::StrCat("log directory ", templ, ": ", strerror(errno)));
      return 2;
    }
    log_dir = templ;
  } else if (mkdir(log_dir.c_str(), 0755) != 0 && errno != EEXIST) {
    Error(absl::StrCat("--log_dir=", log_dir, ": ", strerror(errno)));
    return 2;
  }
  absl::StatusOr<std::string> pid_file = ClaimPidFile(options.launch_file);
  if (!pid_file.ok()) {
    Error(std::string(pid_file.status().message()));
    return 2;
  }

  std::unique_ptr<GraphReadiness> readiness;
  bool waits = false;
  for (const ProcessPlan& p : plan->processes) {
    waits = waits || !p.start_after.empty() || !p.wait_for_writer.empty();
  }
  std::string domain = getenv("CYBER_DOMAIN_ID") != nullptr
                           ? absl::StrCat("CYBER_DOMAIN_ID=", getenv("CYBER_DOMAIN_ID"))
                           : "the default DDS domain (CYBER_DOMAIN_ID unset)";
  if (waits) {
    absl::StatusOr<std::unique_ptr<GraphReadiness>> joined = GraphReadiness::Join();
    if (!joined.ok()) {
      Error(absl::StrCat("readiness (start_after, wait_for_writer) needs the DDS domain: ",
                         joined.status().message()));
      ReleasePidFile(*pid_file);
      return 2;
    }
    readiness = *std::move(joined);
    domain = readiness->Where();
  }

  std::unique_ptr<LockstepRun> lockstep_run;
  if (simulated) {
    absl::StatusOr<std::unique_ptr<LockstepRun>> started = LockstepRun::Start(*plan, options);
    if (!started.ok()) {
      Error(absl::StrCat("--clock=simulated: the lockstep coordinator: ", started.status().message()));
      ReleasePidFile(*pid_file);
      return 2;
    }
    lockstep_run = *std::move(started);
  }

  std::vector<std::string> names;
  for (const ProcessPlan& p : plan->processes) names.push_back(p.name);
  std::printf("cyber_launch: %s: %zu processes (%s) with %s; logs in %s; %s%s\n",
              options.launch_file.c_str(), plan->processes.size(),
              absl::StrJoin(names, ", ").c_str(), mainboard->c_str(), log_dir.c_str(),
              domain.c_str(),
              simulated ? absl::StrCat("; lockstep simulated time for ",
                                       absl::FormatDuration(options.run_for))
                              .c_str()
                        : "");
  std::fflush(stdout);

  Supervisor::Options supervisor_options;
  supervisor_options.log_dir = log_dir;
  supervisor_options.sigint_timeout = options.sigint_timeout;
  supervisor_options.sigterm_timeout = options.sigterm_timeout;
  supervisor_options.readiness = readiness.get();
  supervisor_options.stop_signals_wait_for_init = true;  // mainboard: cyber::Init unblocks them
  const std::string program = *mainboard;
  supervisor_options.command = [program, simulated](const ProcessPlan& p) {
    return MainboardCommand(program, p, simulated);
  };
  Supervisor supervisor(*plan, supervisor_options);
  g_supervisor.store(&supervisor);
  struct sigaction action {};
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  if (lockstep_run != nullptr) {
    g_coordinator.store(lockstep_run->driver());
    lockstep_run->Run(options.paused);
  }
  for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaction(s, &action, nullptr);

  LaunchOutcome outcome = supervisor.Run();
  // The terminal back as it was before a Ctrl-C can end this process the
  // default way (the run may take its step deadline to end).
  if (lockstep_run != nullptr) lockstep_run->StopKeys();

  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaction(s, &dfl, nullptr);
  g_supervisor.store(nullptr);
  std::string lockstep_line;
  if (lockstep_run != nullptr) {
    // Every process has ended. A run that has not ended with them fails
    // at its step (or join) deadline, naming the process it waits for
    // (Ctrl-C has already asked it to stop).
    const lockstep::RunOutcome& run = lockstep_run->Wait();
    g_coordinator.store(nullptr);
    lockstep_line = absl::StrCat(
        "cyber_launch: lockstep simulated time: ", run.ok ? "reached the end: " : "FAILED: ",
        run.why, run.ok ? std::string() : FirstToEndOnItsOwn(outcome, run.why), " (", run.steps, " steps, ", absl::FormatDuration(absl::Nanoseconds(run.reached_ns)),
        " simulated in ", absl::FormatDuration(run.wall), " of real time)\n");
    if (!run.ok && outcome.exit_code == 0) outcome.exit_code = 1;
    lockstep_run.reset();
  }
  readiness.reset();  // leaves the domain before the summary
  std::printf("\n%s%s", lockstep_line.c_str(), LaunchSummary(options.launch_file, outcome).c_str());
  std::fflush(stdout);
  ReleasePidFile(*pid_file);
  return outcome.exit_code;
}

int RunStop(const std::string& launch_file, absl::Duration wait) {
  if (!launch_file.empty()) {
    const absl::Status s = StopLaunch(launch_file, wait);
    if (!s.ok()) {
      Error(std::string(s.message()));
      return 1;
    }
    std::printf("cyber_launch: stopped %s\n", launch_file.c_str());
    return 0;
  }
  absl::StatusOr<std::vector<std::string>> stopped = StopAllLaunches(wait);
  if (!stopped.ok()) {
    Error(std::string(stopped.status().message()));
    return 1;
  }
  for (const std::string& f : *stopped) std::printf("cyber_launch: stopped %s\n", f.c_str());
  return 0;
}

}  // namespace launch
}  // namespace cyber
