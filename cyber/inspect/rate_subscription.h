// RateSubscription: how hz and bw read a channel — not through
// DomainGraph::Subscribe, whose reader keeps the writers' depth (16 by
// default) and replays a transient-local channel's history.
//
// Why a reader of its own: a rate is only as good as the messages it
// counts. At 1 kHz a queue of 16 is 16 ms; a tool descheduled for longer
// on a loaded machine (2 cores, a dozen processes) would lose messages and
// report a rate lower than the writer's. This reader keeps kRateDepth
// messages (seconds at the rates robots use), and is always volatile: a
// replayed history would arrive as one burst and count as a rate. It is
// reliable when every writer is (as DomainGraph's), best effort otherwise.
//
// Threads: `handler` runs on a transport thread, with the receive time on
// the steady clock (CLOCK_MONOTONIC) and the payload's size; no call runs
// after the subscription is destroyed.

#ifndef CYBER_INSPECT_RATE_SUBSCRIPTION_H_
#define CYBER_INSPECT_RATE_SUBSCRIPTION_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cyber/graph/domain_graph.h"
#include "cyber/transport/remote_transport.h"

namespace cyber {
namespace inspect {

// Messages the reader keeps before DDS drops the oldest unread one.
inline constexpr uint32_t kRateDepth = 4096;

using RateHandler = std::function<void(absl::Time receive_time, size_t bytes)>;

// NotFound when the channel has no writer in another process.
absl::StatusOr<std::unique_ptr<RemoteSubscription>> SubscribeForRate(
    graph::DomainGraph& graph, const graph::ChannelView& channel, RateHandler handler);

}  // namespace inspect
}  // namespace cyber

#endif  // CYBER_INSPECT_RATE_SUBSCRIPTION_H_
