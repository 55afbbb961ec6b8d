#include "cyber/monitor/channel_meter.h"

namespace cyber {
namespace monitor {

void ChannelMeter::Record(absl::string_view payload) {
  MutexLock lock(&mu_);
  ++messages_;
  bytes_ += payload.size();
  if (keep_latest_) latest_ = std::string(payload);
}

std::optional<MeterReading> ChannelMeter::Take(absl::Time now) {
  MutexLock lock(&mu_);
  std::optional<MeterReading> reading;
  if (last_take_ && now > *last_take_) {
    const double seconds = absl::ToDoubleSeconds(now - *last_take_);
    reading = MeterReading{static_cast<double>(messages_ - messages_at_take_) / seconds,
                           static_cast<double>(bytes_ - bytes_at_take_) / seconds, messages_};
  }
  if (!last_take_ || now > *last_take_) {
    last_take_ = now;
    messages_at_take_ = messages_;
    bytes_at_take_ = bytes_;
  }
  return reading;
}

std::optional<std::string> ChannelMeter::Latest() const {
  MutexLock lock(&mu_);
  return latest_;
}

uint64_t ChannelMeter::total_messages() const {
  MutexLock lock(&mu_);
  return messages_;
}

}  // namespace monitor
}  // namespace cyber
