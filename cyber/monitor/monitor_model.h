// MonitorModel: what cyber_monitor shows, as plain values — one row per
// channel of the domain, one block per process with its components and
// timers, and the message view's panel — built from what DomainGraph knows
// (ChannelView, ProcessView with the latest ProcessStatus), the rates of
// StatusRates and the monitor's own channel meters. Pure functions of
// their inputs: no DDS, no terminal, no clock, so the figures are unit
// tested from made-up statuses.
//
// Where each figure comes from (docs/tools/cyber_monitor.md says the same
// for users):
//   Hz         sum over the writers' processes of their `sent` rate
//              (StatusRates); the monitor's own meter when no writer's
//              process sends statuses.
//   Rx Hz      the slowest reading process's `received` rate: below Hz,
//              a reader is missing messages now.
//   Bandwidth  bytes per second seen by the monitor's subscription.
//   Lost       sum over the readers' processes of `lost` (the gaps DDS
//              reported to their readers); Undecod, of
//              `dropped_undecodable` (samples that did not parse).

#ifndef CYBER_MONITOR_MONITOR_MODEL_H_
#define CYBER_MONITOR_MONITOR_MODEL_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "cyber/graph/domain_graph.h"
#include "cyber/monitor/channel_meter.h"
#include "cyber/monitor/status_rates.h"

namespace cyber {
namespace monitor {

struct ChannelRow {
  std::string name;
  std::string type_name;
  bool type_conflict = false;
  int writers = 0;
  int readers = 0;
  std::optional<double> hz;
  std::optional<double> received_hz;
  std::optional<double> bytes_per_second;
  uint64_t lost = 0;
  uint64_t undecodable = 0;
  uint64_t send_failures = 0;
};

struct TimerRow {
  std::string name;
  double configured_hz = 0;
  std::optional<double> achieved_hz;
  uint64_t fires = 0;
  uint64_t overruns = 0;
  uint64_t missed_periods = 0;
};

struct ComponentRow {
  std::string name;
  std::string class_name;
  bool timer = false;
  double configured_hz = 0;
  double achieved_hz = 0;
  absl::Duration lateness_p99;
  absl::Duration lateness_max;
  uint64_t procs = 0;
  uint64_t proc_failures = 0;
  uint64_t overruns = 0;
  uint64_t missed_periods = 0;
  uint64_t dropped = 0;
  std::vector<TimerRow> timers;
};

struct ProcessBlock {
  std::string label;
  std::string clock;
  int nodes = 0;
  bool has_status = false;
  absl::Duration uptime;
  std::vector<ComponentRow> components;
};

// The message view: the latest message of one channel, decoded.
struct MessagePanel {
  std::string channel;
  std::string type_name;
  uint64_t received = 0;
  std::optional<double> hz;  // the monitor's own count
  // The message in protobuf text format, or why there is none.
  std::string text;
  bool has_message = false;
};

struct MonitorSnapshot {
  std::string domain;       // DomainGraph::DomainDescription()
  std::string why_empty;    // DomainGraph::WhyEmpty(), shown when empty
  std::vector<ChannelRow> channels;
  std::vector<ProcessBlock> processes;
  std::optional<MessagePanel> message;
};

// Rows of the channel list, in `channels` order. `meters` holds the
// monitor's readings per channel name (absent: not metered).
std::vector<ChannelRow> BuildChannelRows(const std::vector<graph::ChannelView>& channels,
                                         const std::vector<graph::ProcessView>& processes,
                                         const StatusRates& rates,
                                         const std::map<std::string, MeterReading>& meters);

// One block per process, in `processes` order, components as the status
// lists them.
std::vector<ProcessBlock> BuildProcessBlocks(const std::vector<graph::ProcessView>& processes,
                                             const StatusRates& rates);

// The lines of the process view (a header per process, a line per
// component and per timer): what Up and Down move over.
size_t ProcessLineCount(const std::vector<ProcessBlock>& blocks);

}  // namespace monitor
}  // namespace cyber

#endif  // CYBER_MONITOR_MONITOR_MODEL_H_
