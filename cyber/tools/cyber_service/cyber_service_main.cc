// cyber_service: the services of the DDS domain from a shell, as Cyber RT's
// cyber_service (cyber/inspect/service_command.h says what each subcommand does).

#include "cyber/inspect/service_command.h"
#include "cyber/inspect/tool_main.h"

int main(int argc, char** argv) {
  cyber::inspect::ToolSpec spec;
  spec.name = "cyber_service";
  spec.usage = cyber::inspect::kServiceUsage;
  spec.parse = [](const std::vector<std::string>& args)
      -> absl::StatusOr<cyber::inspect::ToolRun> {
    auto parsed = cyber::inspect::ParseServiceArgs(args);
    if (!parsed.ok()) return parsed.status();
    return cyber::inspect::ToolRun([a = *parsed](cyber::graph::DomainGraph& graph, std::ostream& out,
                         const cyber::inspect::StopFn&) {
      return cyber::inspect::RunServiceCommand(a, graph, out);
    });
  };
  return cyber::inspect::RunTool(spec, argc, argv);
}
