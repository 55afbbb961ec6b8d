#include "cyber/inspect/size_meter.h"

#include <algorithm>

#include "absl/strings/str_format.h"

namespace cyber {
namespace inspect {

SizeMeter::SizeMeter(size_t window) : window_(std::max<size_t>(window, 2)) {}

void SizeMeter::Add(absl::Time t, size_t bytes) {
  if (!messages_.empty() && t < messages_.back().first) t = messages_.back().first;
  messages_.emplace_back(t, bytes);
  if (messages_.size() > window_) messages_.pop_front();
  ++total_;
}

std::optional<SizeReport> SizeMeter::Report() const {
  if (messages_.size() < 2) return std::nullopt;
  SizeReport r;
  r.window = messages_.size();
  r.min_bytes = messages_.front().second;
  r.max_bytes = messages_.front().second;
  double all = 0;
  for (const auto& [t, bytes] : messages_) {
    all += static_cast<double>(bytes);
    r.min_bytes = std::min(r.min_bytes, bytes);
    r.max_bytes = std::max(r.max_bytes, bytes);
  }
  r.mean_bytes = all / static_cast<double>(messages_.size());
  const double span_s = absl::ToDoubleSeconds(messages_.back().first - messages_.front().first);
  const double after_first = all - static_cast<double>(messages_.front().second);
  r.bytes_per_second = span_s > 0 ? after_first / span_s : 0;
  return r;
}

std::string FormatBytes(double bytes) {
  if (bytes < 1000) return absl::StrFormat("%.0f B", bytes);
  if (bytes < 1000 * 1000) return absl::StrFormat("%.2f KB", bytes / 1000);
  if (bytes < 1000.0 * 1000 * 1000) return absl::StrFormat("%.2f MB", bytes / (1000 * 1000));
  return absl::StrFormat("%.2f GB", bytes / (1000.0 * 1000 * 1000));
}

std::string FormatSize(const SizeReport& r) {
  return absl::StrFormat("average: %s/s\n\tmean: %s min: %s max: %s window: %d\n",
                         FormatBytes(r.bytes_per_second), FormatBytes(r.mean_bytes),
                         FormatBytes(static_cast<double>(r.min_bytes)),
                         FormatBytes(static_cast<double>(r.max_bytes)), r.window);
}

}  // namespace inspect
}  // namespace cyber
