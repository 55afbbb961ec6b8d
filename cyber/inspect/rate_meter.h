// RateMeter: how often messages arrive on a channel (cyber_channel hz),
// from the times they were received, over a sliding window of the last N
// messages — as rostopic hz and Cyber RT's cyber_channel hz measure it.
//
// Why receive times and a window of messages: the tool knows nothing of a
// message's type, so it cannot read a stamp inside it; and a window of
// messages (not of seconds) makes the average of a 1 kHz channel and a
// 1 Hz one equally precise for the same window. The average rate is
// (messages in the window - 1) / (last time - first time): the intervals'
// mean inverted, so one late message shifts one interval and the next one
// back, not the average.
//
// Pure: fed timestamps, it reads no clock, so tests feed synthetic ones.
//
// Threads: not thread-safe; the caller locks (the subscription handler and
// the printing thread share one).

#ifndef CYBER_INSPECT_RATE_METER_H_
#define CYBER_INSPECT_RATE_METER_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>

#include "absl/time/time.h"

namespace cyber {
namespace inspect {

struct RateReport {
  double average_hz = 0;     // (window - 1) / span
  absl::Duration min;        // the shortest interval in the window
  absl::Duration max;        // the longest
  absl::Duration std_dev;    // of the intervals (population)
  size_t window = 0;         // messages in the window
};

class RateMeter {
 public:
  // Keeps the last `window` messages' times; REQUIRES: window >= 2.
  explicit RateMeter(size_t window);

  // A message received at `t` (times in the order received; an earlier
  // time than the last one is counted as a zero interval).
  void Add(absl::Time t);
  // Messages seen in all, window or not.
  uint64_t total() const { return total_; }
  // nullopt until two messages came.
  std::optional<RateReport> Report() const;

 private:
  const size_t window_;
  std::deque<absl::Time> times_;
  uint64_t total_ = 0;
};

// Cyber RT's and rostopic's shape:
//   average rate: 100.002
//   	min: 0.009s max: 0.011s std dev: 0.00041s window: 1000
std::string FormatRate(const RateReport& report);

}  // namespace inspect
}  // namespace cyber

#endif  // CYBER_INSPECT_RATE_METER_H_
