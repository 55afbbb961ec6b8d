#include "cyber/monitor/monitor_feed.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "google/protobuf/text_format.h"

namespace cyber {
namespace monitor {
namespace {

bool WrittenByAnotherProcess(const graph::ChannelView& c) {
  for (const graph::ChannelEndpointView& w : c.writers) {
    if (!w.in_process_only) return true;
  }
  return false;
}

}  // namespace

MonitorFeed::MonitorFeed(graph::DomainGraph& graph, MonitorOptions options)
    : graph_(graph), options_(options) {}

MonitorFeed::~MonitorFeed() {
  CloseMessage();
  bandwidth_.clear();  // the subscriptions end before the graph is left
}

void MonitorFeed::Sample(absl::Time now) {
  processes_ = graph_.Processes();
  channels_ = graph_.Channels();
  std::vector<std::string> labels;
  for (const graph::ProcessView& p : processes_) {
    labels.push_back(p.label);
    if (p.status) rates_.Update(p.label, *p.status);
  }
  rates_.Retain(labels);
  if (options_.bandwidth) UpdateBandwidthSubscriptions();
  for (auto& [name, metered] : bandwidth_) {
    if (std::optional<MeterReading> r = metered.meter->Take(now)) readings_[name] = *r;
  }
  if (message_.meter) {
    if (std::optional<MeterReading> r = message_.meter->Take(now)) message_reading_ = r;
  }
}

void MonitorFeed::UpdateBandwidthSubscriptions() {
  std::set<std::string> wanted;
  for (const graph::ChannelView& c : channels_) {
    if (WrittenByAnotherProcess(c)) wanted.insert(c.name);
  }
  for (auto it = bandwidth_.begin(); it != bandwidth_.end();) {
    if (wanted.count(it->first)) {
      ++it;
    } else {
      readings_.erase(it->first);
      it = bandwidth_.erase(it);
    }
  }
  for (const std::string& name : wanted) {
    if (bandwidth_.count(name)) continue;
    auto meter = std::make_shared<ChannelMeter>(/*keep_latest=*/false);
    absl::StatusOr<std::unique_ptr<RemoteSubscription>> sub = graph_.Subscribe(
        name, [meter](const graph::DomainGraph::Received& m) { meter->Record(m.payload); });
    if (!sub.ok()) continue;  // gone meanwhile; tried again at the next sample
    bandwidth_[name] = Metered{meter, std::move(*sub)};
  }
}

absl::Status MonitorFeed::OpenMessage(const std::string& channel) {
  CloseMessage();
  auto meter = std::make_shared<ChannelMeter>(/*keep_latest=*/true);
  absl::StatusOr<std::unique_ptr<RemoteSubscription>> sub = graph_.Subscribe(
      channel, [meter](const graph::DomainGraph::Received& m) { meter->Record(m.payload); });
  message_channel_ = channel;
  if (!sub.ok()) {
    message_error_ = sub.status();
    return message_error_;
  }
  message_ = Metered{meter, std::move(*sub)};
  return absl::OkStatus();
}

void MonitorFeed::CloseMessage() {
  message_.subscription.reset();
  message_.meter.reset();
  message_reading_.reset();
  message_channel_.clear();
  message_error_ = absl::OkStatus();
}

bool MonitorFeed::RatesKnown() const {
  std::set<std::string> reporting;
  for (const graph::ProcessView& p : processes_) {
    // A process that announces a status period but whose status has not
    // come yet: its rates are not known.
    if (p.graph.status_period_ns() > 0 && !p.status) return false;
    if (p.status) reporting.insert(p.label);
  }
  for (const graph::ChannelView& c : channels_) {
    for (const graph::ChannelEndpointView& w : c.writers) {
      if (w.in_process_only || !reporting.count(w.process_label)) continue;
      if (!rates_.Channel(w.process_label, c.name)) return false;
    }
  }
  return true;
}

MonitorSnapshot MonitorFeed::Snapshot(const NavState& nav) const {
  MonitorSnapshot s;
  s.domain = graph_.DomainDescription();
  if (processes_.empty()) s.why_empty = graph_.WhyEmpty();
  s.channels = BuildChannelRows(channels_, processes_, rates_, readings_);
  s.processes = BuildProcessBlocks(processes_, rates_);
  if (nav.view != View::kMessage) return s;

  MessagePanel panel;
  panel.channel = nav.open_channel;
  for (const graph::ChannelView& c : channels_) {
    if (c.name == nav.open_channel) panel.type_name = c.type_name;
  }
  if (message_reading_) panel.hz = message_reading_->hz;
  std::optional<std::string> payload;
  if (message_.meter && message_channel_ == nav.open_channel) {
    panel.received = message_.meter->total_messages();
    payload = message_.meter->Latest();
  }
  if (!message_.subscription) {
    panel.text = message_error_.ok() ? "(not subscribed)" : std::string(message_error_.message());
  } else if (!payload) {
    panel.text = "(waiting for a message)";
  } else {
    absl::StatusOr<std::unique_ptr<google::protobuf::Message>> m =
        graph_.Decode(panel.type_name, *payload);
    if (m.ok()) {
      google::protobuf::TextFormat::PrintToString(**m, &panel.text);
      panel.has_message = true;
    } else {
      panel.text = absl::StrCat("(", payload->size(), " bytes, not decoded: ",
                                m.status().message(), ")");
    }
  }
  s.message = std::move(panel);
  return s;
}

}  // namespace monitor
}  // namespace cyber
