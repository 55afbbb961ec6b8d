#include "cyber/common/steady_time.h"
#include "cyber/inspect/rate_subscription.h"

#include <time.h>

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace cyber {
namespace inspect {
absl::StatusOr<std::unique_ptr<RemoteSubscription>> SubscribeForRate(
    graph::DomainGraph& graph, const graph::ChannelView& channel, RateHandler handler) {
  bool any = false;
  bool reliable = true;
  for (const graph::ChannelEndpointView& w : channel.writers) {
    if (!w.qos.has_value() || w.type_name != channel.type_name) continue;
    any = true;
    reliable &= w.qos->reliability == ChannelQos::Reliability::kReliable;
  }
  if (!any) {
    return absl::NotFoundError(absl::StrCat("channel \"", channel.name,
                                            "\" has no writer in another process of ",
                                            graph.DomainDescription()));
  }
  RemoteEndpoint e;
  e.channel = channel.name;
  e.type_name = channel.type_name;
  e.node = "cyber_channel";
  e.qos.reliability =
      reliable ? ChannelQos::Reliability::kReliable : ChannelQos::Reliability::kBestEffort;
  e.qos.durability = ChannelQos::Durability::kVolatile;
  e.qos.history = ChannelQos::History::kKeepLast;
  e.qos.depth = kRateDepth;
  return graph.transport().Subscribe(e, [handler = std::move(handler)](const RemoteSample& s) {
    handler(SteadyNow(), s.payload.size());
    return true;
  });
}

}  // namespace inspect
}  // namespace cyber
