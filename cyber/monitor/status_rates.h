// StatusRates: per-second rates from the counters that every process sends
// in its ProcessStatus (graph.proto, "/cyber/status", once a second): how
// many messages each process sent and received on each channel, and how
// often each of its timers fired.
//
// Why from the statuses and not from a subscription: the monitor lists
// every channel of the domain; counting their messages itself would mean
// reading every channel (a 1 kHz lidar included) only to print a number
// the writer already counts. A status carries the process's uptime on its
// steady clock, so a rate is exact over the interval between two statuses
// of one process (about a second), whatever delay the statuses took to
// arrive, and a lost status only lengthens the interval.
//
// Trade-off: a rate is known one status period after a process appears,
// and it is an average over that period (a burst inside it is not seen).
//
// Threads: not thread-safe; one thread (the monitor's refresh) owns it.

#ifndef CYBER_MONITOR_STATUS_RATES_H_
#define CYBER_MONITOR_STATUS_RATES_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cyber/graph/graph.pb.h"

namespace cyber {
namespace monitor {

// One process's traffic on one channel, over its last status interval.
struct ChannelRate {
  double sent_hz = 0;
  double received_hz = 0;
  double sent_bytes_per_second = 0;  // the messages' bytes
};

class StatusRates {
 public:
  // Takes the latest status of the process `label`. A status with the
  // sequence already seen changes nothing; one whose uptime is not after
  // the previous one's (the process restarted under the same label) starts
  // the process afresh.
  void Update(const std::string& label, const graph::ProcessStatus& status);
  // Forgets the processes not in `labels` (they left the domain).
  void Retain(const std::vector<std::string>& labels);

  // The rates of `label` on `channel` over the last interval; nullopt
  // until two statuses of the process came, or when the process does not
  // count the channel.
  std::optional<ChannelRate> Channel(const std::string& label, const std::string& channel) const;
  // The fire rate of the timer `timer` of the component `component`.
  std::optional<double> TimerHz(const std::string& label, const std::string& component,
                                const std::string& timer) const;

 private:
  struct Sample {
    int64_t uptime_ns = 0;
    uint64_t sequence = 0;
    std::map<std::string, graph::ChannelCounts> channels;
    std::map<std::string, uint64_t> timer_fires;  // "component/timer"
  };
  struct Process {
    std::optional<Sample> previous;
    Sample latest;
  };
  // Seconds between the two samples of `p`; nullopt without two.
  static std::optional<double> Interval(const Process& p);

  std::map<std::string, Process> processes_;
};

}  // namespace monitor
}  // namespace cyber

#endif  // CYBER_MONITOR_STATUS_RATES_H_
