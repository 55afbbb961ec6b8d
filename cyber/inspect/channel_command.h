// cyber_channel's subcommands over a DomainGraph, in Cyber RT's spellings
// and output shapes:
//
//   list                        every channel of the domain, one a line
//   info CHANNEL                type, writers and readers (node in
//                               process@host:pid) with their QoS, each
//                               writer->reader link's transport (shm/udp),
//                               type conflicts with the fields that differ
//   type CHANNEL                the message type and its .proto definition
//   echo CHANNEL [-n N] [-f F]  each message in protobuf text format
//   hz CHANNEL [-w W] [-n N]    average rate, min/max/std dev of intervals
//   bw CHANNEL... [-w W] [-n N] bytes/s, mean/min/max message size
//
// The program is thin (cyber/tools/cyber_channel): it parses, joins the
// domain, and calls RunChannelCommand with std::cout, so tests call the
// same function with a string stream.
//
// Threads: RunChannelCommand blocks the calling thread; echo/hz/bw write
// to `out` from the transport's thread too, under a lock of their own, and
// never after RunChannelCommand returns.

#ifndef CYBER_INSPECT_CHANNEL_COMMAND_H_
#define CYBER_INSPECT_CHANNEL_COMMAND_H_

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cyber/graph/domain_graph.h"

namespace cyber {
namespace inspect {

// --help of cyber_channel.
extern const char kChannelUsage[];

struct ChannelArgs {
  std::string command;                // list info type echo hz bw
  std::vector<std::string> channels;  // one, or several for bw
  int64_t count = 0;                  // -n: messages, then exit; 0: until stopped
  std::string field;                  // echo -f
  size_t window = 10000;              // hz/bw -w: messages in the window
  // How often hz and bw print while they run.
  absl::Duration report_period = absl::Seconds(1);
};

// args: what follows the program's name. InvalidArgument (the caller
// prints the usage and exits 2) for an unknown subcommand or flag, a
// missing channel, a bad count.
absl::StatusOr<ChannelArgs> ParseChannelArgs(const std::vector<std::string>& args);

// Whether the user asked to stop (SIGINT); polled by echo, hz and bw.
using StopFn = std::function<bool()>;

// Runs the subcommand. Errors: NotFound from DomainGraph::Channel (the
// closest names, or which domain was searched and why it may be empty),
// FailedPrecondition when no descriptor of the channel's type was
// announced (echo, type), the field selector's errors. An empty domain is
// not an error for list: it prints why it may be empty.
absl::Status RunChannelCommand(const ChannelArgs& args, graph::DomainGraph& graph,
                               std::ostream& out, const StopFn& stop);

// The parts of info and type, for tests and other tools.
std::string FormatChannelInfo(const graph::ChannelView& channel);
std::string FormatTypeDefinition(const google::protobuf::Descriptor& type);

}  // namespace inspect
}  // namespace cyber

#endif  // CYBER_INSPECT_CHANNEL_COMMAND_H_
