// AnnounceRuntime: a GraphAnnouncer for everything on a runtime's channel
// bus — what mainboard, cyber::Init and the tools' test peers use, so a
// process is seen by cyber_channel, cyber_node, cyber_service,
// cyber_monitor, cyber_launch and cyber_bridge.
//
// Destroy the announcer before the runtime shuts down its transport.

#ifndef CYBER_GRAPH_RUNTIME_ANNOUNCER_H_
#define CYBER_GRAPH_RUNTIME_ANNOUNCER_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cyber/graph/graph_announcer.h"
#include "cyber/runtime/runtime.h"

namespace cyber {
namespace graph {

struct RuntimeAnnounceOptions {
  // The process's statistics (null: no status is sent).
  GraphAnnouncer::StatusFn status;
  // Names of nodes to list even without a channel or service (components
  // whose only work is a timer); called at every look.
  std::function<std::vector<std::string>()> extra_nodes;
  std::vector<std::string> dag_files;
  std::string clock = "steady";
  GraphAnnouncer::Options announcer;
};

// FailedPrecondition when the runtime has no transport to other processes
// (--in_process_only, or a runtime made without one).
absl::StatusOr<std::unique_ptr<GraphAnnouncer>> AnnounceRuntime(
    Runtime& runtime, RuntimeAnnounceOptions options = {});

}  // namespace graph
}  // namespace cyber

#endif  // CYBER_GRAPH_RUNTIME_ANNOUNCER_H_
