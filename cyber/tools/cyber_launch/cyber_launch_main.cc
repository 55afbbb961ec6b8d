// cyber_launch: starts the processes of a Cyber RT launch file, supervises
// them (respawn, required processes, start order by readiness) and stops
// them cleanly; `stop` ends a running launch from another shell.
//
//   cyber_launch start FILE.launch [--mainboard=PATH] [--log_dir=DIR]
//                [--sigint_timeout=10s] [--sigterm_timeout=5s]
//                [--clock=simulated --run_for=60s [--speed=N]]
//   cyber_launch stop [FILE.launch] [--stop_wait=60s]
//
// docs/tools/cyber_launch.md has the file format; the logic lives in
// cyber/launch (launch_command.h).

#include <cstdio>
#include <cstring>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "cyber/launch/launch_command.h"
#include "glog/logging.h"

namespace {

constexpr char kUsage[] =
    "usage: cyber_launch start FILE.launch [--mainboard=PATH] [--log_dir=DIR]\n"
    "                    [--sigint_timeout=10s] [--sigterm_timeout=5s]\n"
    "                    [--clock=simulated --run_for=60s [--speed=N] [--join_deadline=60s]\n"
    "                     [--step_deadline=10s] [--paused]\n"
    "                     [--recording=F.mcap --recording_channels=/a,/b]]\n"
    "       cyber_launch stop [FILE.launch] [--stop_wait=60s]\n"
    "\n"
    "start  runs each process of FILE.launch (mainboard --process_name=NAME -d a.dag ...),\n"
    "       in file order and by readiness (<start_after>, <wait_for_writer>), respawns\n"
    "       them as the file says (<exception_handler>respawn, <respawn_limit>,\n"
    "       <respawn_delay>, <respawn_on>), stops all when a <required> process ends;\n"
    "       Ctrl-C (or `cyber_launch stop FILE`) stops every process: SIGINT in reverse\n"
    "       start order, SIGTERM after --sigint_timeout, SIGKILL --sigterm_timeout later.\n"
    "       Each process's output goes to DIR/<process_name>.log (default: a fresh\n"
    "       directory, printed at start); a summary is printed at the end.\n"
    "stop   stops the cyber_launch running FILE.launch (every one of yours without FILE)\n"
    "       and waits at most --stop_wait for it to end.\n"
    "\n"
    "  --mainboard=PATH      the mainboard to run (default: beside cyber_launch, then\n"
    "                        bazel-bin/cyber/mainboard/mainboard, then PATH)\n"
    "  --log_dir=DIR         where the per-process logs go\n"
    "  --clock=simulated     one simulated time for every process, in lockstep: each\n"
    "                        mainboard runs --clock=simulated --lockstep and cyber_launch\n"
    "                        grants the instants to --run_for, at most --speed times\n"
    "                        real time (0: as fast as they go); each prints its trace\n"
    "                        digest (docs/lockstep.md); from a terminal, space pauses\n"
    "                        and resumes, s runs one step while paused\n"
    "  --paused              (simulated) hold the first instant until space or s\n"
    "  --recording=F.mcap    (simulated) play these channels of a recording into the run,\n"
    "  --recording_channels=/a,/b  each message at its recorded instant, as a process\n"
    "                        named \"recording\"\n"
    "The processes join the DDS domain CYBER_DOMAIN_ID (docs/tools/cyber_launch.md).\n";

bool TakeDuration(const char* arg, const char* name, absl::Duration* out, bool* bad) {
  const std::string prefix = std::string("--") + name + "=";
  if (!absl::StartsWith(arg, prefix)) return false;
  const std::string value = arg + prefix.size();
  if (!absl::ParseDuration(value, out) || *out < absl::ZeroDuration()) {
    std::fprintf(stderr, "cyber_launch: %s%s: \"%s\" is not a duration (e.g. 500ms, 10s)\n",
                 prefix.c_str(), value.c_str(), value.c_str());
    *bad = true;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  // The DDS participant (readiness) logs through glog: to stderr, without
  // the "Logging before InitGoogleLogging()" line.
  FLAGS_logtostderr = true;
  google::InitGoogleLogging(argv[0]);
  cyber::launch::StartOptions start;
  absl::Duration stop_wait = absl::Seconds(60);
  std::string command;
  std::string file;
  bool bad = false;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    if (std::strcmp(a, "--help") == 0 || std::strcmp(a, "-h") == 0 ||
        std::strcmp(a, "help") == 0) {
      std::printf("%s", kUsage);
      return 0;
    }
    if (absl::StartsWith(a, "--mainboard=")) {
      start.mainboard = a + std::strlen("--mainboard=");
    } else if (absl::StartsWith(a, "--log_dir=")) {
      start.log_dir = a + std::strlen("--log_dir=");
    } else if (absl::StartsWith(a, "--clock=")) {
      start.clock = a + std::strlen("--clock=");
    } else if (absl::StartsWith(a, "--recording=")) {
      start.recording = a + std::strlen("--recording=");
    } else if (absl::StartsWith(a, "--recording_channels=")) {
      start.recording_channels =
          absl::StrSplit(a + std::strlen("--recording_channels="), ',', absl::SkipEmpty());
    } else if (std::strcmp(a, "--paused") == 0) {
      start.paused = true;
    } else if (absl::StartsWith(a, "--speed=")) {
      if (!absl::SimpleAtod(a + std::strlen("--speed="), &start.speed) || start.speed < 0) {
        std::fprintf(stderr, "cyber_launch: %s: not 0 or a positive number\n", a);
        return 2;
      }
    } else if (TakeDuration(a, "run_for", &start.run_for, &bad) ||
               TakeDuration(a, "join_deadline", &start.join_deadline, &bad) ||
               TakeDuration(a, "step_deadline", &start.step_deadline, &bad)) {
    } else if (TakeDuration(a, "sigint_timeout", &start.sigint_timeout, &bad) ||
               TakeDuration(a, "sigterm_timeout", &start.sigterm_timeout, &bad) ||
               TakeDuration(a, "stop_wait", &stop_wait, &bad)) {
    } else if (absl::StartsWith(a, "-")) {
      std::fprintf(stderr, "cyber_launch: unknown flag \"%s\"\n%s", a, kUsage);
      return 2;
    } else if (command.empty()) {
      command = a;
    } else if (file.empty()) {
      file = a;
    } else {
      std::fprintf(stderr, "cyber_launch: one launch file at a time (\"%s\" is extra)\n", a);
      return 2;
    }
  }
  if (bad) return 2;
  if (command == "start") {
    if (file.empty()) {
      std::fprintf(stderr, "cyber_launch: start needs a launch file\n%s", kUsage);
      return 2;
    }
    start.launch_file = file;
    return cyber::launch::RunStart(start);
  }
  if (command == "stop") return cyber::launch::RunStop(file, stop_wait);
  std::fprintf(stderr, "cyber_launch: %s\n%s",
               command.empty() ? "no command (start or stop)"
                               : ("unknown command \"" + command + "\" (start or stop)").c_str(),
               kUsage);
  return 2;
}
