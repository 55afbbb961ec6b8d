// MonitorFeed: what the monitor reads from a DomainGraph, turned into a
// MonitorSnapshot. It owns the StatusRates (fed with every process's
// latest status), the bandwidth subscriptions (one per channel that has a
// writer in another process, when enabled: the statuses count messages,
// not bytes) and the message view's subscription, which keeps the
// channel's latest payload to decode it with the announced descriptor.
//
// Sample() takes the rates once per refresh period; Snapshot() builds what
// to draw from the latest samples, as often as keys come.
//
// Threads: one thread (the monitor's loop) calls its methods; the
// subscriptions' handlers run on transport threads and touch only their
// ChannelMeter.

#ifndef CYBER_MONITOR_MONITOR_FEED_H_
#define CYBER_MONITOR_MONITOR_FEED_H_

#include <map>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "cyber/graph/domain_graph.h"
#include "cyber/monitor/channel_meter.h"
#include "cyber/monitor/monitor_model.h"
#include "cyber/monitor/navigator.h"
#include "cyber/monitor/status_rates.h"

namespace cyber {
namespace monitor {

struct MonitorOptions {
  // How often the figures are taken and the screen redrawn.
  absl::Duration refresh = absl::Seconds(1);
  // Subscribe to every channel written by another process to measure its
  // bandwidth (costs a reader per channel; off: the column shows "-").
  bool bandwidth = true;
};

class MonitorFeed {
 public:
  MonitorFeed(graph::DomainGraph& graph, MonitorOptions options);
  ~MonitorFeed();
  MonitorFeed(const MonitorFeed&) = delete;
  MonitorFeed& operator=(const MonitorFeed&) = delete;

  // Reads the graph and the statuses, takes the meters' rates at `now`
  // (steady clock), and starts or ends the bandwidth subscriptions of
  // channels that came or went.
  void Sample(absl::Time now);
  // What to draw for `nav` (the message panel when its view is open).
  MonitorSnapshot Snapshot(const NavState& nav) const;

  // Starts reading `channel` for the message view; the error names the
  // channel (and the closest names).
  absl::Status OpenMessage(const std::string& channel);
  void CloseMessage();

  // Whether every channel written by a process that sends statuses has a
  // rate (two statuses of each writer came): --once waits for it.
  bool RatesKnown() const;

 private:
  struct Metered {
    std::shared_ptr<ChannelMeter> meter;
    std::unique_ptr<RemoteSubscription> subscription;
  };
  void UpdateBandwidthSubscriptions();

  graph::DomainGraph& graph_;
  const MonitorOptions options_;
  StatusRates rates_;
  std::vector<graph::ChannelView> channels_;
  std::vector<graph::ProcessView> processes_;
  std::map<std::string, Metered> bandwidth_;
  std::map<std::string, MeterReading> readings_;
  std::string message_channel_;
  Metered message_;
  absl::Status message_error_;  // why the message view has no subscription
  std::optional<MeterReading> message_reading_;
};

}  // namespace monitor
}  // namespace cyber

#endif  // CYBER_MONITOR_MONITOR_FEED_H_
