#include "cyber/inspect/node_command.h"

#include "absl/strings/str_cat.h"
#include "cyber/inspect/command_line.h"

namespace cyber {
namespace inspect {

const char kNodeUsage[] =
    R"(cyber_node: the nodes of the DDS domain (CYBER_DOMAIN_ID).

usage: cyber_node <command> [args]

commands:
  list          every node, one a line, with its process (process@host:pid)
  info NODE     its process, the channels it writes and reads, the services
                it serves and calls

flags:
  -h, --help    this text

Exit status: 0 done, 1 an error (unknown node: the closest names; nothing
found: which domain was searched), 2 bad arguments.
)";

namespace {

void Section(const std::string& title, const std::vector<std::string>& names, std::string* out) {
  absl::StrAppend(out, "\t", title, " (", names.size(), "):\n");
  for (const std::string& n : names) absl::StrAppend(out, "\t\t", n, "\n");
}

}  // namespace

std::string FormatNodeInfo(const graph::NodeView& node) {
  std::string out = absl::StrCat("Node: ", node.name, "\n\tprocess: ", node.process_label, "\n");
  Section("writes", node.writes, &out);
  Section("reads", node.reads, &out);
  Section("serves", node.serves, &out);
  Section("calls", node.calls, &out);
  return out;
}

absl::StatusOr<NodeArgs> ParseNodeArgs(const std::vector<std::string>& args) {
  absl::StatusOr<CommandLine> line = ParseCommandLine(args, {}, {});
  if (!line.ok()) return line.status();
  if (line->operands.empty()) return absl::InvalidArgumentError("no command given");
  NodeArgs parsed;
  parsed.command = line->operands[0];
  if (parsed.command == "list") {
    if (line->operands.size() != 1) return absl::InvalidArgumentError("list takes no node");
  } else if (parsed.command == "info") {
    if (line->operands.size() != 2) return absl::InvalidArgumentError("info takes one node");
    parsed.node = line->operands[1];
  } else {
    return absl::InvalidArgumentError(absl::StrCat("unknown command \"", parsed.command, "\""));
  }
  return parsed;
}

absl::Status RunNodeCommand(const NodeArgs& args, graph::DomainGraph& graph, std::ostream& out) {
  if (args.command == "list") {
    const std::vector<graph::NodeView> nodes = graph.Nodes();
    out << "The number of nodes is: " << nodes.size() << "\n";
    for (const graph::NodeView& n : nodes) out << n.name << "\t" << n.process_label << "\n";
    if (nodes.empty()) {
      out << "No node found in " << graph.DomainDescription() << ". " << graph.WhyEmpty() << "\n";
    }
    return absl::OkStatus();
  }
  graph.WaitUntil([&args](const graph::DomainGraph& g) { return g.Node(args.node).ok(); },
                  kLookupPatience);
  absl::StatusOr<graph::NodeView> node = graph.Node(args.node);
  if (!node.ok()) return node.status();
  out << FormatNodeInfo(*node);
  return absl::OkStatus();
}

}  // namespace inspect
}  // namespace cyber
