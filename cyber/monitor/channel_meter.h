// ChannelMeter: what the monitor's own subscription to a channel saw —
// messages and bytes per second (the bandwidth column: the statuses count
// messages, not bytes) and, for the message view, the latest payload.
//
// Record() runs on a transport thread for every message; Take() on the
// monitor's thread once per refresh, and measures the interval between two
// Take()s on the receive times it is given, so tests drive it with made-up
// instants and no clock.
//
// Threads: Record, Take and Latest from any threads.

#ifndef CYBER_MONITOR_CHANNEL_METER_H_
#define CYBER_MONITOR_CHANNEL_METER_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "cyber/common/mutex.h"

namespace cyber {
namespace monitor {

struct MeterReading {
  double hz = 0;
  double bytes_per_second = 0;
  uint64_t total_messages = 0;  // since the meter began
};

class ChannelMeter {
 public:
  explicit ChannelMeter(bool keep_latest) : keep_latest_(keep_latest) {}

  // One message of `payload.size()` bytes received.
  void Record(absl::string_view payload);
  // The rates since the previous Take() (or since `now` was first passed,
  // for the first call, which returns nullopt); `now` on the steady clock.
  std::optional<MeterReading> Take(absl::Time now);
  // The latest payload (empty optional before the first message, or when
  // the meter keeps none) and the number of messages so far.
  std::optional<std::string> Latest() const;
  uint64_t total_messages() const;

 private:
  const bool keep_latest_;
  mutable Mutex mu_;
  // mu_ protects the following state.
  uint64_t messages_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
  std::optional<std::string> latest_ ABSL_GUARDED_BY(mu_);
  std::optional<absl::Time> last_take_ ABSL_GUARDED_BY(mu_);
  uint64_t messages_at_take_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t bytes_at_take_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace monitor
}  // namespace cyber

#endif  // CYBER_MONITOR_CHANNEL_METER_H_
