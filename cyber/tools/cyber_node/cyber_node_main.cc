// cyber_node: the nodes of the DDS domain from a shell, as Cyber RT's
// cyber_node (cyber/inspect/node_command.h says what each subcommand does).

#include "cyber/inspect/node_command.h"
#include "cyber/inspect/tool_main.h"

int main(int argc, char** argv) {
  cyber::inspect::ToolSpec spec;
  spec.name = "cyber_node";
  spec.usage = cyber::inspect::kNodeUsage;
  spec.parse = [](const std::vector<std::string>& args)
      -> absl::StatusOr<cyber::inspect::ToolRun> {
    auto parsed = cyber::inspect::ParseNodeArgs(args);
    if (!parsed.ok()) return parsed.status();
    return cyber::inspect::ToolRun([a = *parsed](cyber::graph::DomainGraph& graph, std::ostream& out,
                         const cyber::inspect::StopFn&) {
      return cyber::inspect::RunNodeCommand(a, graph, out);
    });
  };
  return cyber::inspect::RunTool(spec, argc, argv);
}
