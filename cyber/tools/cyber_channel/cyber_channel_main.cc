// cyber_channel: the channels of the DDS domain from a shell, as Cyber RT's
// cyber_channel (cyber/inspect/channel_command.h says what each subcommand does).

#include "cyber/inspect/channel_command.h"
#include "cyber/inspect/tool_main.h"

int main(int argc, char** argv) {
  cyber::inspect::ToolSpec spec;
  spec.name = "cyber_channel";
  spec.usage = cyber::inspect::kChannelUsage;
  spec.parse = [](const std::vector<std::string>& args)
      -> absl::StatusOr<cyber::inspect::ToolRun> {
    auto parsed = cyber::inspect::ParseChannelArgs(args);
    if (!parsed.ok()) return parsed.status();
    return cyber::inspect::ToolRun([a = *parsed](cyber::graph::DomainGraph& graph, std::ostream& out,
                         const cyber::inspect::StopFn& stop) {
      return cyber::inspect::RunChannelCommand(a, graph, out, stop);
    });
  };
  return cyber::inspect::RunTool(spec, argc, argv);
}
