// Internal to this repository: not part of the API (docs/api.md lists the
// API headers); its Bazel target is visible only inside this repository.
//
// StuckReport: what a shutdown (or a simulated run) that does not finish is
// waiting for, as lines for the person reading stderr.
//
// Why one function: mainboard's --shutdown_deadline and a simulated graph's
// stuck watch (SimulatedGraph::Options::stuck_after) report the same facts
// the same way, so a user who has seen one recognises the other. The facts
// are what the process can tell about itself without stopping anything:
// which components a Launcher has not finished stopping (the one whose
// Shutdown() is in progress first), and every timer Stop() waiting for a
// running callback, with its caller and how long it has waited
// (timer/timer_stop_registry.h). Format, each line starting with `prefix`:
//
//   components not stopped: "planner" (Shutdown() in progress), "lidar"
//   timer stops in progress:
//     timer "planner_timeout": Stop() waiting 5.002s for its running
//     callback; caller: thread 4242 "mainboard", in component "planner"
//     Shutdown()                                        (one line each)
//
// with "none" for an empty list.
//
// Threads: any.

#ifndef CYBER_MAINBOARD_STUCK_REPORT_H_
#define CYBER_MAINBOARD_STUCK_REPORT_H_

#include <string>
#include <vector>

#include "cyber/mainboard/launcher.h"
#include "timer/timer_stop_registry.h"

namespace cyber {

std::string StuckReport(const Launcher::StopProgress& progress,
                        const std::vector<timer::StopInProgress>& stops,
                        const std::string& prefix);

}  // namespace cyber

#endif  // CYBER_MAINBOARD_STUCK_REPORT_H_
