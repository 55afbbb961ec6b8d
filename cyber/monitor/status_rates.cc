#include "cyber/monitor/status_rates.h"

#include <set>

namespace cyber {
namespace monitor {
namespace {

constexpr double kNanosPerSecond = 1e9;

std::string TimerKey(const std::string& component, const std::string& timer) {
  return component + "/" + timer;
}

}  // namespace

void StatusRates::Update(const std::string& label, const graph::ProcessStatus& status) {
  Sample sample;
  sample.uptime_ns = status.uptime_ns();
  sample.sequence = status.sequence();
  for (const graph::ChannelCounts& c : status.channels()) sample.channels[c.channel()] = c;
  for (const graph::ComponentStatus& component : status.components()) {
    for (const graph::TimerStatus& timer : component.timers()) {
      sample.timer_fires[TimerKey(component.name(), timer.name())] = timer.fires();
    }
  }
  auto it = processes_.find(label);
  if (it == processes_.end()) {
    processes_[label].latest = std::move(sample);
    return;
  }
  Process& p = it->second;
  if (sample.sequence == p.latest.sequence && sample.uptime_ns == p.latest.uptime_ns) return;
  if (sample.uptime_ns <= p.latest.uptime_ns) {
    p.previous.reset();  // restarted: its counters began again
  } else {
    p.previous = std::move(p.latest);
  }
  p.latest = std::move(sample);
}

void StatusRates::Retain(const std::vector<std::string>& labels) {
  const std::set<std::string> keep(labels.begin(), labels.end());
  for (auto it = processes_.begin(); it != processes_.end();) {
    it = keep.count(it->first) ? std::next(it) : processes_.erase(it);
  }
}

std::optional<double> StatusRates::Interval(const Process& p) {
  if (!p.previous) return std::nullopt;
  const int64_t ns = p.latest.uptime_ns - p.previous->uptime_ns;
  if (ns <= 0) return std::nullopt;
  return static_cast<double>(ns) / kNanosPerSecond;
}

std::optional<ChannelRate> StatusRates::Channel(const std::string& label,
                                                const std::string& channel) const {
  auto it = processes_.find(label);
  if (it == processes_.end()) return std::nullopt;
  const std::optional<double> seconds = Interval(it->second);
  if (!seconds) return std::nullopt;
  auto now = it->second.latest.channels.find(channel);
  if (now == it->second.latest.channels.end()) return std::nullopt;
  // A channel the process began counting within the interval: from zero.
  graph::ChannelCounts before;
  auto was = it->second.previous->channels.find(channel);
  if (was != it->second.previous->channels.end()) before = was->second;
  auto delta = [](uint64_t now, uint64_t before) {
    return now >= before ? static_cast<double>(now - before) : 0.0;
  };
  ChannelRate rate;
  rate.sent_hz = delta(now->second.sent(), before.sent()) / *seconds;
  rate.received_hz = delta(now->second.received(), before.received()) / *seconds;
  rate.sent_bytes_per_second = delta(now->second.bytes_sent(), before.bytes_sent()) / *seconds;
  return rate;
}

std::optional<double> StatusRates::TimerHz(const std::string& label, const std::string& component,
                                           const std::string& timer) const {
  auto it = processes_.find(label);
  if (it == processes_.end()) return std::nullopt;
  const std::optional<double> seconds = Interval(it->second);
  if (!seconds) return std::nullopt;
  const std::string key = TimerKey(component, timer);
  auto now = it->second.latest.timer_fires.find(key);
  auto was = it->second.previous->timer_fires.find(key);
  if (now == it->second.latest.timer_fires.end()) return std::nullopt;
  const uint64_t before = was == it->second.previous->timer_fires.end() ? 0 : was->second;
  if (now->second < before) return std::nullopt;
  return static_cast<double>(now->second - before) / *seconds;
}

}  // namespace monitor
}  // namespace cyber
