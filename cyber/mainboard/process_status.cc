#include "cyber/mainboard/process_status.h"

namespace cyber {

graph::ProcessStatus ProcessStatusOf(const std::vector<ComponentStats>& components,
                                     const std::vector<RemoteChannelStats>& channels) {
  graph::ProcessStatus status;
  for (const ComponentStats& c : components) {
    graph::ComponentStatus* s = status.add_components();
    s->set_name(c.name);
    s->set_class_name(c.class_name);
    s->set_timer(c.timer);
    s->set_procs(c.procs);
    s->set_proc_failures(c.proc_failures);
    s->set_configured_hz(c.configured_hz);
    s->set_achieved_hz(c.achieved_hz);
    s->set_lateness_p99_ns(absl::ToInt64Nanoseconds(c.lateness_p99));
    s->set_lateness_max_ns(absl::ToInt64Nanoseconds(c.lateness_max));
    s->set_overruns(c.overruns);
    s->set_missed_periods(c.missed_periods);
    s->set_dropped(c.dropped);
    for (const timer::OwnedTimer& t : c.timers) {
      graph::TimerStatus* ts = s->add_timers();
      ts->set_name(t.name);
      if (!t.oneshot && t.period > absl::ZeroDuration()) {
        ts->set_configured_hz(absl::Seconds(1) / t.period);
      }
      ts->set_fires(t.statistics.fires);
      ts->set_overruns(t.statistics.overruns);
      ts->set_missed_periods(t.statistics.missed_periods);
    }
  }
  for (const RemoteChannelStats& c : channels) {
    graph::ChannelCounts* s = status.add_channels();
    s->set_channel(c.channel);
    s->set_sent(c.sent);
    s->set_received(c.received);
    s->set_lost(c.lost);
    s->set_dropped_undecodable(c.dropped_undecodable);
    s->set_send_failures(c.send_failures);
    s->set_bytes_sent(c.bytes_sent);
    s->set_bytes_received(c.bytes_received);
  }
  return status;
}

}  // namespace cyber
