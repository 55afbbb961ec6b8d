#include "cyber/inspect/rate_meter.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_format.h"

namespace cyber {
namespace inspect {

RateMeter::RateMeter(size_t window) : window_(std::max<size_t>(window, 2)) {}

void RateMeter::Add(absl::Time t) {
  if (!times_.empty() && t < times_.back()) t = times_.back();
  times_.push_back(t);
  if (times_.size() > window_) times_.pop_front();
  ++total_;
}

std::optional<RateReport> RateMeter::Report() const {
  if (times_.size() < 2) return std::nullopt;
  RateReport r;
  r.window = times_.size();
  const double intervals = static_cast<double>(times_.size() - 1);
  const double span_s = absl::ToDoubleSeconds(times_.back() - times_.front());
  const double mean_s = span_s / intervals;
  r.average_hz = span_s > 0 ? intervals / span_s : 0;
  r.min = absl::InfiniteDuration();
  r.max = absl::ZeroDuration();
  double squares = 0;
  for (size_t i = 1; i < times_.size(); ++i) {
    const absl::Duration d = times_[i] - times_[i - 1];
    r.min = std::min(r.min, d);
    r.max = std::max(r.max, d);
    const double dev = absl::ToDoubleSeconds(d) - mean_s;
    squares += dev * dev;
  }
  r.std_dev = absl::Seconds(std::sqrt(squares / intervals));
  return r;
}

std::string FormatRate(const RateReport& r) {
  return absl::StrFormat("average rate: %.3f\n\tmin: %.6fs max: %.6fs std dev: %.6fs window: %d\n",
                         r.average_hz, absl::ToDoubleSeconds(r.min),
                         absl::ToDoubleSeconds(r.max), absl::ToDoubleSeconds(r.std_dev),
                         r.window);
}

}  // namespace inspect
}  // namespace cyber
