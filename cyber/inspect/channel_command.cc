#include "cyber/inspect/channel_command.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cyber/inspect/channel_streams.h"
#include "cyber/inspect/command_line.h"
#include "google/protobuf/descriptor.h"

namespace cyber {
namespace inspect {

const char kChannelUsage[] =
    R"(cyber_channel: the channels of the DDS domain (CYBER_DOMAIN_ID).

usage: cyber_channel <command> [args]

commands:
  list                          every channel, one a line
  info CHANNEL                  type, writers and readers with their QoS, the
                                transport of each link (shm or udp), type
                                conflicts
  type CHANNEL                  the message type and its .proto definition
  echo CHANNEL [-n N] [-f FIELD]
                                each message in protobuf text format; -n: exit
                                after N messages; -f: only FIELD (accel.x,
                                points[3].x, header)
  hz CHANNEL [-w WINDOW] [-n N] average rate and min/max/std dev of the
                                intervals over the last WINDOW messages
                                (default 10000), every second; -n: exit after
                                N messages with a last report
  bw CHANNEL... [-w WINDOW] [-n N]
                                bytes per second and mean/min/max message size
                                of each channel; -n: exit once every channel
                                had N messages

flags:
  -h, --help                    this text

Exit status: 0 done, 1 an error (unknown channel: the closest names; nothing
found: which domain was searched), 2 bad arguments.
)";

namespace {

using graph::ChannelEndpointView;
using graph::ChannelView;

std::string Endpoint(const ChannelEndpointView& e) {
  return absl::StrCat(e.node, " in ", e.process_label);
}

std::string Qos(const ChannelEndpointView& e) {
  if (e.in_process_only || !e.qos) return "in process only";
  return e.qos->ToString();
}

absl::Status ListChannels(graph::DomainGraph& graph, std::ostream& out) {
  const std::vector<ChannelView> channels = graph.Channels();
  out << "The number of channels is: " << channels.size() << "\n";
  for (const ChannelView& c : channels) out << c.name << "\n";
  if (channels.empty()) {
    out << "No channel found in " << graph.DomainDescription() << ". " << graph.WhyEmpty()
        << "\n";
  }
  return absl::OkStatus();
}

// The message types `type` uses, itself first, each once.
void CollectTypes(const google::protobuf::Descriptor& type,
                  std::vector<const google::protobuf::Descriptor*>* types) {
  for (const auto* seen : *types) {
    if (seen == &type) return;
  }
  types->push_back(&type);
  for (int i = 0; i < type.field_count(); ++i) {
    if (const auto* sub = type.field(i)->message_type()) CollectTypes(*sub, types);
  }
}

}  // namespace

std::string FormatChannelInfo(const ChannelView& c) {
  std::string out = absl::StrCat(c.name, "\n\ttype: ", c.type_name.empty() ? "(unknown)" : c.type_name,
                                 "\n");
  absl::StrAppend(&out, "\twriters (", c.writers.size(), "):\n");
  for (const auto& w : c.writers) {
    absl::StrAppend(&out, "\t\t", Endpoint(w), "  type: ", w.type_name, "  qos: ", Qos(w), "\n");
  }
  absl::StrAppend(&out, "\treaders (", c.readers.size(), "):\n");
  for (const auto& r : c.readers) {
    absl::StrAppend(&out, "\t\t", Endpoint(r), "  type: ", r.type_name, "  qos: ", Qos(r), "\n");
  }
  std::vector<std::string> links;
  for (const auto& w : c.writers) {
    for (const auto& r : c.readers) {
      if (w.process_label == r.process_label) continue;  // in-process: the bus, not DDS
      links.push_back(absl::StrCat("\t\t", w.process_label, " -> ", r.process_label, ": ",
                                   graph::LinkKind(w.host, r.host), "\n"));
    }
  }
  // One line per pair of processes, whatever their nodes.
  std::sort(links.begin(), links.end());
  links.erase(std::unique(links.begin(), links.end()), links.end());
  absl::StrAppend(&out, "\tlinks (", links.size(), "):\n", absl::StrJoin(links, ""));
  if (c.type_conflict) {
    absl::StrAppend(&out, "\ttype conflict:\n");
    for (const std::string& d : c.conflict_details) absl::StrAppend(&out, "\t\t", d, "\n");
  }
  if (!c.bound_mismatches.empty()) {
    absl::StrAppend(&out, "\tdata sharing bounds that drop messages:\n");
    for (const std::string& d : c.bound_mismatches) absl::StrAppend(&out, "\t\t", d, "\n");
  }
  return out;
}

std::string FormatTypeDefinition(const google::protobuf::Descriptor& type) {
  std::vector<const google::protobuf::Descriptor*> types;
  CollectTypes(type, &types);
  std::string out = absl::StrCat(type.full_name(), "\n");
  for (const auto* t : types) {
    absl::StrAppend(&out, "// ", t->full_name(), " (", t->file()->name(), ")\n", t->DebugString());
  }
  return out;
}

absl::StatusOr<ChannelArgs> ParseChannelArgs(const std::vector<std::string>& args) {
  absl::StatusOr<CommandLine> line = ParseCommandLine(args, {"-n", "-f", "-w"}, {});
  if (!line.ok()) return line.status();
  ChannelArgs parsed;
  if (line->operands.empty()) return absl::InvalidArgumentError("no command given");
  parsed.command = line->operands[0];
  parsed.channels.assign(line->operands.begin() + 1, line->operands.end());
  static const std::set<std::string> kCommands = {"list", "info", "type", "echo", "hz", "bw"};
  if (!kCommands.count(parsed.command)) {
    return absl::InvalidArgumentError(absl::StrCat("unknown command \"", parsed.command, "\""));
  }
  const std::set<std::string> takes_n = {"echo", "hz", "bw"};
  const std::set<std::string> takes_w = {"hz", "bw"};
  for (const auto& [flag, value] : line->values) {
    const bool ok = (flag == "-n" && takes_n.count(parsed.command)) ||
                    (flag == "-w" && takes_w.count(parsed.command)) ||
                    (flag == "-f" && parsed.command == "echo");
    if (!ok) {
      return absl::InvalidArgumentError(
          absl::StrCat("flag ", flag, " does not apply to ", parsed.command));
    }
  }
  const size_t wanted = parsed.command == "list" ? 0 : 1;
  if (parsed.command == "bw" ? parsed.channels.empty() : parsed.channels.size() != wanted) {
    return absl::InvalidArgumentError(
        wanted == 0 ? absl::StrCat(parsed.command, " takes no channel")
                    : absl::StrCat(parsed.command, parsed.command == "bw"
                                                       ? " takes one channel or more"
                                                       : " takes one channel"));
  }
  absl::StatusOr<int64_t> n = PositiveCount(*line, "-n", 0);
  if (!n.ok()) return n.status();
  parsed.count = *n;
  absl::StatusOr<int64_t> w = PositiveCount(*line, "-w", 10000);
  if (!w.ok()) return w.status();
  if (*w < 2) return absl::InvalidArgumentError("flag -w: a window holds 2 messages or more");
  parsed.window = static_cast<size_t>(*w);
  if (line->Has("-f")) parsed.field = line->values.at("-f");
  return parsed;
}

absl::Status RunChannelCommand(const ChannelArgs& args, graph::DomainGraph& graph,
                               std::ostream& out, const StopFn& stop) {
  if (args.command == "list") return ListChannels(graph, out);
  for (const std::string& name : args.channels) {
    graph.WaitUntil([&name](const graph::DomainGraph& g) { return g.Channel(name).ok(); },
                    kLookupPatience);
  }
  if (args.command == "bw") return RunBw(args, graph, out, stop);
  absl::StatusOr<ChannelView> channel = graph.Channel(args.channels[0]);
  if (!channel.ok()) return channel.status();
  if (args.command == "info") {
    out << FormatChannelInfo(*channel);
    return absl::OkStatus();
  }
  if (args.command == "type") {
    if (channel->descriptor == nullptr) return NoDescriptor(*channel);
    out << FormatTypeDefinition(*channel->descriptor);
    return absl::OkStatus();
  }
  if (args.command == "echo") return RunEcho(args, *channel, graph, out, stop);
  return RunHz(args, *channel, graph, out, stop);
}

}  // namespace inspect
}  // namespace cyber
