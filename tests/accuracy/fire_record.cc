#include "tests/accuracy/fire_record.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace cyber {
namespace accuracy {
namespace {

// The ceil(q * n)-th smallest of `sorted` (at least the first).
absl::Duration NearestRank(const std::vector<absl::Duration>& sorted,
                           double q) {
  const double n = static_cast<double>(sorted.size());
  const size_t rank = static_cast<size_t>(std::max(1.0, std::ceil(q * n)));
  return sorted[std::min(rank, sorted.size()) - 1];
}

}  // namespace

Lateness Summarize(std::vector<absl::Duration> samples) {
  Lateness s;
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  s.count = static_cast<int64_t>(samples.size());
  absl::Duration sum;
  for (absl::Duration d : samples) {
    if (d < absl::ZeroDuration()) ++s.early;
    sum += d;
  }
  s.min = samples.front();
  s.max = samples.back();
  s.p50 = NearestRank(samples, 0.50);
  s.p90 = NearestRank(samples, 0.90);
  s.p99 = NearestRank(samples, 0.99);
  s.p999 = NearestRank(samples, 0.999);
  s.mean = sum / s.count;
  return s;
}

std::vector<absl::Duration> LatenessOf(const std::vector<Fire>& fires) {
  std::vector<absl::Duration> out;
  out.reserve(fires.size());
  for (const Fire& f : fires) out.push_back(f.lateness());
  return out;
}

std::vector<absl::Duration> PastTickOf(const std::vector<Fire>& fires) {
  std::vector<absl::Duration> out;
  out.reserve(fires.size());
  for (const Fire& f : fires) {
    if (f.tick.has_value()) out.push_back(f.actual - *f.tick);
  }
  return out;
}

}  // namespace accuracy
}  // namespace cyber
