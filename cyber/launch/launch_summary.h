// The summary cyber_launch prints at the end: one row per process (its
// last exit, the stop signals it needed, respawns against the limit, its
// log), then each process's own summary table as mainboard printed it
// when it exited (copied from the process's log).
//
//   cyber_launch: launch.launch ended: stop requested (exit code 0)
//   process   pid    starts respawns last exit         stop signals  log
//   pollers   -      2      1/3      exit 0            INT           /tmp/cyber_launch.x/pollers.log
//
// (pid: the process's pid if it still runs, "-" once it has exited.)
//   ...
//
//   == pollers (pollers.log) ==
//   component  class  procs ...
//
// Pure functions; any thread.

#ifndef CYBER_LAUNCH_LAUNCH_SUMMARY_H_
#define CYBER_LAUNCH_LAUNCH_SUMMARY_H_

#include <string>

#include "absl/strings/string_view.h"
#include "cyber/launch/supervisor.h"

namespace cyber {
namespace launch {

// The process table of `outcome` (no per-process tables).
std::string ProcessTable(const LaunchOutcome& outcome);

// mainboard's own summary from a process log: in the part after the last
// "cyber_launch: start" line, from the summary table's header ("component
// class ...") to the end, without glog lines (they interleave: stderr and
// stdout share the log). Empty when the last run printed none (killed, or
// not a mainboard).
std::string ProcessOwnSummary(absl::string_view log);

// For a lockstep run that failed naming a process lost (`why`): the first
// process that ended on its own (not stopped by cyber_launch), as
// "; the first process to end on its own: fusion (signal 9 (KILL))", when
// `why` does not name it already; else empty. The supervisor's record is
// what really ended first: DDS can declare a living process lost too when
// another is killed (docs/transport.md, faults).
std::string FirstToEndOnItsOwn(const LaunchOutcome& outcome, absl::string_view why);

// The whole summary: the end line, the table, then each process's own
// summary read from its log file (a process without one is skipped).
std::string LaunchSummary(const std::string& launch_file, const LaunchOutcome& outcome);

}  // namespace launch
}  // namespace cyber

#endif  // CYBER_LAUNCH_LAUNCH_SUMMARY_H_
