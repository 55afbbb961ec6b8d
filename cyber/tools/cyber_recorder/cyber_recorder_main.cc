// cyber_recorder: records a running domain into MCAP files, plays them
// back, and shows, splits and recovers them, in Cyber RT's spellings
// (cyber/record/recorder_command.h says what each subcommand does).

#include <iostream>
#include <string>
#include <vector>

#include "cyber/inspect/tool_main.h"
#include "cyber/record/recorder_command.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  bool help = args.empty();
  for (const std::string& a : args) help |= a == "-h" || a == "--help";
  if (!help) {
    absl::StatusOr<cyber::record::RecorderArgs> parsed = cyber::record::ParseRecorderArgs(args);
    if (parsed.ok() && !cyber::record::NeedsDomain(*parsed)) {
      absl::Status s = cyber::record::RunOnFiles(*parsed, std::cout);
      if (!s.ok()) {
        std::cerr << "cyber_recorder: " << s.message() << std::endl;
        return 1;
      }
      return 0;
    }
  }
  cyber::inspect::ToolSpec spec;
  spec.name = "cyber_recorder";
  spec.usage = cyber::record::kRecorderUsage;
  spec.parse = [](const std::vector<std::string>& args)
      -> absl::StatusOr<cyber::inspect::ToolRun> {
    absl::StatusOr<cyber::record::RecorderArgs> parsed = cyber::record::ParseRecorderArgs(args);
    if (!parsed.ok()) return parsed.status();
    return cyber::inspect::ToolRun([a = *parsed](cyber::graph::DomainGraph& graph,
                                                 std::ostream& out,
                                                 const cyber::inspect::StopFn& stop) {
      return cyber::record::RunOnDomain(a, graph, out, stop);
    });
  };
  return cyber::inspect::RunTool(spec, argc, argv);
}
