// What the main()s of cyber_channel, cyber_node and cyber_service share:
// --help, bad arguments (the error and the usage on stderr, exit 2),
// joining the domain named by the environment and waiting for discovery
// (settled for 300 ms, and at least one periodic announcement of the
// domain's processes, lease / 3 + 300 ms: 1.3 s by default, as a lost
// answer to the tool's first announcement hides a process until then; when
// no process at all was seen by then, up to 700 ms more for a first one,
// and as long for each process that DDS discovered as one announcing its
// graph, or whose graph writer DDS matched, but whose graph has not come),
// running the subcommand with std::cout, an error's message on
// stderr with exit 1, and SIGINT as the stop of echo/hz/bw (exit 0; during
// discovery, exit 130), after which the tool leaves the domain cleanly (a
// second SIGINT kills as usual).
//
// Threads: called once, from main().

#ifndef CYBER_INSPECT_TOOL_MAIN_H_
#define CYBER_INSPECT_TOOL_MAIN_H_

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cyber/graph/domain_graph.h"
#include "cyber/inspect/channel_command.h"

namespace cyber {
namespace inspect {

// A parsed command, ready to run on a joined graph.
using ToolRun = std::function<absl::Status(graph::DomainGraph&, std::ostream&, const StopFn&)>;

struct ToolSpec {
  std::string name;   // "cyber_channel": the domain participant's name, errors' prefix
  const char* usage;  // --help
  // The arguments after the program's name; InvalidArgument: usage, exit 2.
  std::function<absl::StatusOr<ToolRun>(const std::vector<std::string>&)> parse;
};

// The exit status: 0, 1 (an error), 2 (bad arguments).
int RunTool(const ToolSpec& spec, int argc, char** argv);

}  // namespace inspect
}  // namespace cyber

#endif  // CYBER_INSPECT_TOOL_MAIN_H_
