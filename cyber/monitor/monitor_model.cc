#include "cyber/monitor/monitor_model.h"

#include <algorithm>
#include <set>

namespace cyber {
namespace monitor {
namespace {

const graph::ChannelCounts* FindCounts(const graph::ProcessView& p, const std::string& channel) {
  if (!p.status) return nullptr;
  for (const graph::ChannelCounts& c : p.status->channels()) {
    if (c.channel() == channel) return &c;
  }
  return nullptr;
}

std::set<std::string> Labels(const std::vector<graph::ChannelEndpointView>& endpoints) {
  std::set<std::string> labels;
  for (const graph::ChannelEndpointView& e : endpoints) {
    if (!e.in_process_only) labels.insert(e.process_label);
  }
  return labels;
}

}  // namespace

std::vector<ChannelRow> BuildChannelRows(const std::vector<graph::ChannelView>& channels,
                                         const std::vector<graph::ProcessView>& processes,
                                         const StatusRates& rates,
                                         const std::map<std::string, MeterReading>& meters) {
  std::map<std::string, const graph::ProcessView*> by_label;
  for (const graph::ProcessView& p : processes) by_label[p.label] = &p;

  std::vector<ChannelRow> rows;
  rows.reserve(channels.size());
  for (const graph::ChannelView& c : channels) {
    ChannelRow row;
    row.name = c.name;
    row.type_name = c.type_name;
    row.type_conflict = c.type_conflict;
    row.writers = static_cast<int>(c.writers.size());
    row.readers = static_cast<int>(c.readers.size());

    for (const std::string& label : Labels(c.writers)) {
      if (std::optional<ChannelRate> r = rates.Channel(label, c.name)) {
        row.hz = row.hz.value_or(0) + r->sent_hz;
        // A writer that counts no bytes while it sends (one built before
        // statuses carried them) leaves the figure to the meter.
        if (r->sent_hz == 0 || r->sent_bytes_per_second > 0) {
          row.bytes_per_second = row.bytes_per_second.value_or(0) + r->sent_bytes_per_second;
        }
      }
      auto p = by_label.find(label);
      if (p == by_label.end()) continue;
      if (const graph::ChannelCounts* counts = FindCounts(*p->second, c.name)) {
        row.send_failures += counts->send_failures();
      }
    }
    for (const std::string& label : Labels(c.readers)) {
      if (std::optional<ChannelRate> r = rates.Channel(label, c.name)) {
        row.received_hz = row.received_hz ? std::min(*row.received_hz, r->received_hz)
                                          : r->received_hz;
      }
      auto p = by_label.find(label);
      if (p == by_label.end()) continue;
      if (const graph::ChannelCounts* counts = FindCounts(*p->second, c.name)) {
        row.lost += counts->lost();
        row.undecodable += counts->dropped_undecodable();
      }
    }
    auto meter = meters.find(c.name);
    if (meter != meters.end()) {
      // The writers' own counts when they send them; the monitor's
      // subscription otherwise (a writer that sends no status).
      if (!row.bytes_per_second) row.bytes_per_second = meter->second.bytes_per_second;
      if (!row.hz) row.hz = meter->second.hz;
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<ProcessBlock> BuildProcessBlocks(const std::vector<graph::ProcessView>& processes,
                                             const StatusRates& rates) {
  std::vector<ProcessBlock> blocks;
  blocks.reserve(processes.size());
  for (const graph::ProcessView& p : processes) {
    ProcessBlock block;
    block.label = p.label;
    block.clock = p.graph.clock();
    block.nodes = p.graph.nodes_size();
    block.has_status = p.status.has_value();
    if (p.status) {
      block.uptime = absl::Nanoseconds(p.status->uptime_ns());
      for (const graph::ComponentStatus& s : p.status->components()) {
        ComponentRow c;
        c.name = s.name();
        c.class_name = s.class_name();
        c.timer = s.timer();
        c.configured_hz = s.configured_hz();
        c.achieved_hz = s.achieved_hz();
        c.lateness_p99 = absl::Nanoseconds(s.lateness_p99_ns());
        c.lateness_max = absl::Nanoseconds(s.lateness_max_ns());
        c.procs = s.procs();
        c.proc_failures = s.proc_failures();
        c.overruns = s.overruns();
        c.missed_periods = s.missed_periods();
        c.dropped = s.dropped();
        for (const graph::TimerStatus& t : s.timers()) {
          TimerRow timer;
          timer.name = t.name();
          timer.configured_hz = t.configured_hz();
          timer.achieved_hz = rates.TimerHz(p.label, s.name(), t.name());
          timer.fires = t.fires();
          timer.overruns = t.overruns();
          timer.missed_periods = t.missed_periods();
          c.timers.push_back(std::move(timer));
        }
        block.components.push_back(std::move(c));
      }
    }
    blocks.push_back(std::move(block));
  }
  return blocks;
}

size_t ProcessLineCount(const std::vector<ProcessBlock>& blocks) {
  size_t lines = 0;
  for (const ProcessBlock& b : blocks) {
    lines += 1 + b.components.size();
    for (const ComponentRow& c : b.components) lines += c.timers.size();
  }
  return lines;
}

}  // namespace monitor
}  // namespace cyber
