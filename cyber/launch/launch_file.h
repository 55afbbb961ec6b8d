// LaunchPlan, ParseLaunch: a Cyber RT launch file (.launch, XML) read into
// the processes cyber_launch starts.
//
//   <cyber>
//     <module>
//       <name>pollers</name>
//       <dag_conf>pollers.dag</dag_conf>          (one or more)
//       <process_name>pollers</process_name>
//       <exception_handler>respawn</exception_handler>   respawn | exit
//       <respawn_limit>3</respawn_limit>
//       <!-- ours -->
//       <respawn_delay>1s</respawn_delay>
//       <respawn_on>failure</respawn_on>           failure | always
//       <required>true</required>
//       <start_after>drivers</start_after>         (several)
//       <wait_for_writer>/sensor/imu</wait_for_writer>   (several)
//       <ready_timeout>30s</ready_timeout>
//     </module>
//   </cyber>
//
// Cyber's rules kept: modules with the same process_name share one
// mainboard process (their dag files in file order); a module without one
// goes to the shared process "mainboard_default"; respawn_limit defaults
// to 3. Processes are listed in the order their first module appears.
//
// The settings after dag_conf belong to the process: modules of one
// process may repeat them, but a different value is an error naming both
// places. start_after must name a process that comes earlier in the file
// (so readiness can never wait in a circle).
//
// A relative dag_conf is looked up beside the launch file first, then in
// the current directory (where Cyber RT looks); the plan holds the path
// found. Every error is InvalidArgument "FILE:LINE: <element>: ..." with
// the offending value.
//
// Pure functions (ParseLaunchFile reads the file and stats dag files);
// any thread.

#ifndef CYBER_LAUNCH_LAUNCH_FILE_H_
#define CYBER_LAUNCH_LAUNCH_FILE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace cyber {
namespace launch {

// What happens when a process exits on its own (Cyber's exception_handler).
enum class ExceptionHandler {
  kNone,     // nothing: it stays down (Cyber's default)
  kRespawn,  // started again (see RespawnOn, respawn_delay, respawn_limit)
  kExit,     // a failure stops the whole launch
};
enum class RespawnOn {
  kFailure,  // a non-zero exit or a signal (a clean exit 0 stays down)
  kAlways,   // any exit
};

inline constexpr char kDefaultProcessName[] = "mainboard_default";

struct ProcessPlan {
  std::string name;                  // process_name
  std::vector<std::string> modules;  // the modules' names, file order
  std::vector<std::string> dag_files;
  ExceptionHandler exception_handler = ExceptionHandler::kNone;
  int respawn_limit = 3;
  absl::Duration respawn_delay = absl::Seconds(1);
  RespawnOn respawn_on = RespawnOn::kFailure;
  // Its exit (once it will not be respawned) stops every process.
  bool required = false;
  // Readiness: started once each of these processes has announced its
  // components (a ProcessGraph with nodes) and each channel has a writer.
  std::vector<std::string> start_after;
  std::vector<std::string> wait_for_writer;
  absl::Duration ready_timeout = absl::Seconds(30);
  std::string where;  // "FILE:LINE" of its first module, for messages
};

struct LaunchPlan {
  std::string file;
  std::vector<ProcessPlan> processes;  // start order
};

struct LaunchParseOptions {
  // Where relative dag_conf paths are looked up first (the launch file's
  // directory); then the current directory.
  std::string base_dir;
  // False: dag files are not looked for (relative ones are joined to
  // base_dir), for tests of the format alone.
  bool check_dag_files = true;
};

// Parses launch file text; `file` names it in errors.
absl::StatusOr<LaunchPlan> ParseLaunch(absl::string_view text, const std::string& file,
                                       const LaunchParseOptions& options);
// Reads and parses `path` (base_dir: its directory). NotFound naming the
// path when it cannot be read.
absl::StatusOr<LaunchPlan> ParseLaunchFile(const std::string& path);

// A plan's process by name; nullptr if none.
const ProcessPlan* FindProcess(const LaunchPlan& plan, absl::string_view name);

}  // namespace launch
}  // namespace cyber

#endif  // CYBER_LAUNCH_LAUNCH_FILE_H_
