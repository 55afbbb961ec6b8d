// SizeMeter: how many bytes a channel carries (cyber_channel bw), over a
// sliding window of the last N messages: bytes per second and the mean,
// smallest and largest message — rostopic bw's and Cyber RT's figures.
//
// Bytes per second over the window is the bytes of every message after the
// first divided by the time from the first to the last: the first message
// opens the span, it did not arrive in it (a window of N messages at a
// steady rate R carries (N - 1) * size in (N - 1) / R seconds).
//
// Pure: fed (time, size) pairs, it reads no clock. Not thread-safe; the
// caller locks.

#ifndef CYBER_INSPECT_SIZE_METER_H_
#define CYBER_INSPECT_SIZE_METER_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <utility>

#include "absl/time/time.h"

namespace cyber {
namespace inspect {

struct SizeReport {
  double bytes_per_second = 0;
  double mean_bytes = 0;
  size_t min_bytes = 0;
  size_t max_bytes = 0;
  size_t window = 0;  // messages in the window
};

class SizeMeter {
 public:
  // Keeps the last `window` messages; REQUIRES: window >= 2.
  explicit SizeMeter(size_t window);

  void Add(absl::Time t, size_t bytes);
  uint64_t total() const { return total_; }
  // nullopt until two messages came.
  std::optional<SizeReport> Report() const;

 private:
  const size_t window_;
  std::deque<std::pair<absl::Time, size_t>> messages_;
  uint64_t total_ = 0;
};

// "1.23 MB", "512 B": bytes in the largest unit that keeps the number >= 1
// (1 KB = 1000 B, as rostopic bw).
std::string FormatBytes(double bytes);

// Cyber RT's and rostopic's shape:
//   average: 12.50 KB/s
//   	mean: 125 B min: 125 B max: 125 B window: 100
std::string FormatSize(const SizeReport& report);

}  // namespace inspect
}  // namespace cyber

#endif  // CYBER_INSPECT_SIZE_METER_H_
