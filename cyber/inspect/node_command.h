// cyber_node's subcommands over a DomainGraph, in Cyber RT's spellings:
//
//   list        every node of the domain, one a line
//   info NODE   its process (process@host:pid), the channels it writes and
//               reads, the services it serves and calls
//
// Threads: RunNodeCommand blocks the calling thread.

#ifndef CYBER_INSPECT_NODE_COMMAND_H_
#define CYBER_INSPECT_NODE_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cyber/graph/domain_graph.h"

namespace cyber {
namespace inspect {

extern const char kNodeUsage[];

struct NodeArgs {
  std::string command;  // list info
  std::string node;     // info
};

// InvalidArgument for an unknown subcommand or flag, a missing or extra
// operand.
absl::StatusOr<NodeArgs> ParseNodeArgs(const std::vector<std::string>& args);

// NotFound from DomainGraph::Node (closest names, or why the domain may be
// empty); list prints why an empty domain may be empty and succeeds.
absl::Status RunNodeCommand(const NodeArgs& args, graph::DomainGraph& graph, std::ostream& out);

std::string FormatNodeInfo(const graph::NodeView& node);

}  // namespace inspect
}  // namespace cyber

#endif  // CYBER_INSPECT_NODE_COMMAND_H_
