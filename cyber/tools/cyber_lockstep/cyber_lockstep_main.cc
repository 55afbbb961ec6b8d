// cyber_lockstep: the time authority of a simulation that spans several
// processes. It joins the DDS domain (CYBER_DOMAIN_ID), waits for the named
// processes (mainboards started with --clock=simulated --lockstep) and
// grants them one simulated instant after another until --run_for, never
// moving time while a message is in flight (cyber/lockstep/coordinator.h).
//
//   mainboard --process_name=pollers --clock=simulated --lockstep -d pollers.dag &
//   mainboard --process_name=fusion --clock=simulated --lockstep -d fusion.dag &
//   cyber_lockstep --processes=pollers,fusion --run_for=60s
//
// Exit status: 0 when the run reached its end, 1 when it failed (a process
// lost, refused or late: the reason names it), 2 for bad arguments or a
// domain it cannot join; 130 after Ctrl-C (the processes are stopped).

#include <signal.h>

#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "cyber/lockstep/coordinator_driver.h"
#include "cyber/transport/dds/dds_transport.h"

namespace {

constexpr char kUsage[] =
    "usage: cyber_lockstep --processes=NAME,NAME... --run_for=DURATION [--speed=N]\n"
    "                      [--step_deadline=10s] [--join_deadline=60s]\n"
    "\n"
    "Grants the processes of a lockstep simulation (mainboard --clock=simulated\n"
    "--lockstep --process_name=NAME) one simulated instant after another, on the\n"
    "DDS domain CYBER_DOMAIN_ID.\n"
    "  --processes       the process names (their --process_name), all required\n"
    "  --run_for         simulated time to run, e.g. 60s\n"
    "  --speed=0         0: as fast as the processes go; N: at most N times real time\n"
    "  --step_deadline   real time a process may take for one instant before the\n"
    "                    run fails naming it\n"
    "  --join_deadline   real time to wait for every process to join\n";

cyber::lockstep::CoordinatorDriver* g_driver = nullptr;
volatile sig_atomic_t g_interrupted = 0;

void OnSignal(int) {
  g_interrupted = 1;
  if (g_driver != nullptr) g_driver->RequestStop();
}

bool Value(const std::string& arg, const std::string& name, std::string* out) {
  const std::string prefix = "--" + name + "=";
  if (arg.rfind(prefix, 0) != 0) return false;
  *out = arg.substr(prefix.size());
  return true;
}

bool Duration(const std::string& flag, const std::string& text, absl::Duration* out) {
  if (absl::ParseDuration(text, out) && *out > absl::ZeroDuration() && *out != absl::InfiniteDuration()) {
    return true;
  }
  std::cerr << "cyber_lockstep: --" << flag << ": \"" << text << "\" is not a positive duration (e.g. 60s)\n";
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  cyber::lockstep::CoordinatorDriverOptions options;
  options.coordinator.step_deadline = absl::Seconds(10);
  options.coordinator.join_deadline = absl::Seconds(60);
  absl::Duration run_for = absl::ZeroDuration();
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    std::string v;
    if (arg == "--help" || arg == "-h") {
      std::cout << kUsage;
      return 0;
    } else if (Value(arg, "processes", &v)) {
      options.coordinator.processes = absl::StrSplit(v, ',', absl::SkipEmpty());
    } else if (Value(arg, "run_for", &v)) {
      if (!Duration("run_for", v, &run_for)) return 2;
    } else if (Value(arg, "step_deadline", &v)) {
      if (!Duration("step_deadline", v, &options.coordinator.step_deadline)) return 2;
    } else if (Value(arg, "join_deadline", &v)) {
      if (!Duration("join_deadline", v, &options.coordinator.join_deadline)) return 2;
    } else if (Value(arg, "speed", &v)) {
      if (!absl::SimpleAtod(v, &options.speed) || options.speed < 0) {
        std::cerr << "cyber_lockstep: --speed: \"" << v << "\" is not 0 or a positive number\n";
        return 2;
      }
    } else {
      std::cerr << "cyber_lockstep: unknown argument \"" << arg << "\"\n\n" << kUsage;
      return 2;
    }
  }
  if (options.coordinator.processes.empty()) {
    std::cerr << "cyber_lockstep: --processes is required (the --process_name of each mainboard)\n\n" << kUsage;
    return 2;
  }
  if (run_for == absl::ZeroDuration()) {
    std::cerr << "cyber_lockstep: --run_for is required (simulated time, e.g. 60s)\n\n" << kUsage;
    return 2;
  }
  options.coordinator.end_ns = absl::ToInt64Nanoseconds(run_for);
  std::random_device rd;
  options.coordinator.run_id = (static_cast<uint64_t>(rd()) << 32 | rd()) | 1;
  options.progress = [](const std::string& line) { std::cerr << line << "\n"; };

  absl::StatusOr<cyber::dds::DdsTransportOptions> dds =
      cyber::dds::DdsTransportOptionsFromEnvironment("cyber_lockstep");
  if (!dds.ok()) {
    std::cerr << "cyber_lockstep: " << dds.status().message() << "\n";
    return 2;
  }
  cyber::dds::SetFewerWakeups(&*dds);  // as the lockstep processes
  auto transport = std::make_shared<cyber::dds::DdsTransport>(*dds);
  absl::StatusOr<std::unique_ptr<cyber::lockstep::CoordinatorDriver>> driver =
      cyber::lockstep::CoordinatorDriver::Start(transport, options);
  if (!driver.ok()) {
    std::cerr << "cyber_lockstep: " << driver.status().message() << "\n";
    transport->Shutdown();
    return 2;
  }
  g_driver = driver->get();
  struct sigaction action {};
  action.sa_handler = OnSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  std::cerr << "cyber_lockstep: waiting for " << absl::StrJoin(options.coordinator.processes, ", ")
            << " on domain " << dds->domain_id << "\n";
  const cyber::lockstep::RunOutcome outcome = (*driver)->Run();
  g_driver = nullptr;
  driver->reset();
  transport->Shutdown();
  std::printf("cyber_lockstep: %s\n", outcome.why.c_str());
  const double ratio = outcome.wall > absl::ZeroDuration()
                           ? absl::ToDoubleSeconds(absl::Nanoseconds(outcome.reached_ns)) /
                                 absl::ToDoubleSeconds(outcome.wall)
                           : 0.0;
  std::printf("%llu steps, %s simulated in %s of real time (%.0fx real time)\n",
              static_cast<unsigned long long>(outcome.steps),
              absl::FormatDuration(absl::Nanoseconds(outcome.reached_ns)).c_str(),
              absl::FormatDuration(outcome.wall).c_str(), ratio);
  if (g_interrupted) return 130;
  return outcome.ok ? 0 : 1;
}
