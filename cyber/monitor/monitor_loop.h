// The two ways cyber_monitor runs over a DomainGraph: interactively in a
// terminal (RunInteractive: keys in, a frame out every refresh and after
// every key), or once (RunOnce: waits until the rates are known, then
// returns the tables as text, for scripts and tests).
//
// Threads: each runs on the caller's thread until it returns.

#ifndef CYBER_MONITOR_MONITOR_LOOP_H_
#define CYBER_MONITOR_MONITOR_LOOP_H_

#include <string>

#include "absl/time/time.h"
#include "cyber/graph/domain_graph.h"
#include "cyber/monitor/monitor_feed.h"
#include "cyber/monitor/terminal.h"

namespace cyber {
namespace monitor {

// Until q (returns 0) or a stop signal (returns 128 + its number).
int RunInteractive(graph::DomainGraph& graph, Terminal& terminal, const MonitorOptions& options);

// The snapshot once every process that writes a channel has sent two
// statuses (its rates are known), or after `window` at the latest.
// `empty` is set when no process was found.
std::string RunOnce(graph::DomainGraph& graph, const MonitorOptions& options,
                    absl::Duration window, int width, bool* empty);

}  // namespace monitor
}  // namespace cyber

#endif  // CYBER_MONITOR_MONITOR_LOOP_H_
