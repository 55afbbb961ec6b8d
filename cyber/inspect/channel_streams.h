// cyber_channel's subcommands that read a channel's messages as they come
// (echo, hz, bw): a DomainGraph subscription whose handler, on a transport
// thread, decodes or measures each message, and the calling thread that
// waits for -n messages or a stop, printing hz's and bw's reports every
// report_period. Internal to channel_command.
//
// hz and bw read through SubscribeForRate (rate_subscription.h: a deep,
// volatile queue), echo through DomainGraph::Subscribe (a transient-local
// channel's latest message comes at once).
//
// Why the handler does the work and the calling thread only prints: the
// receive time must be taken as the message arrives (hz measures it), and
// decoding in the handler keeps no queue of payloads. Both write `out`
// under one lock, the handler only whole messages; nothing writes `out`
// once the subscription is destroyed, before the functions return.

#ifndef CYBER_INSPECT_CHANNEL_STREAMS_H_
#define CYBER_INSPECT_CHANNEL_STREAMS_H_

#include <ostream>

#include "absl/status/status.h"
#include "cyber/graph/domain_graph.h"
#include "cyber/inspect/channel_command.h"

namespace cyber {
namespace inspect {

absl::Status RunEcho(const ChannelArgs& args, const graph::ChannelView& channel,
                     graph::DomainGraph& graph, std::ostream& out, const StopFn& stop);
absl::Status RunHz(const ChannelArgs& args, const graph::ChannelView& channel,
                   graph::DomainGraph& graph, std::ostream& out, const StopFn& stop);
// Several channels: each is looked up first (NotFound before anything runs).
absl::Status RunBw(const ChannelArgs& args, graph::DomainGraph& graph, std::ostream& out,
                   const StopFn& stop);

// FailedPrecondition: no process announced the descriptor of the
// channel's type, so it cannot be decoded.
absl::Status NoDescriptor(const graph::ChannelView& channel);

}  // namespace inspect
}  // namespace cyber

#endif  // CYBER_INSPECT_CHANNEL_STREAMS_H_
