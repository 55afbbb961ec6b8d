// Internal to this repository: not part of the API (docs/api.md lists the
// API headers); its Bazel target is visible only inside this repository.
//
// LatencyHistogram: fixed-size log-linear histogram of non-negative
// durations, for per-timer lateness and run-time percentiles.
//
// Why not a vector of samples: a 100 Hz timer running for days would grow
// without bound. Buckets are powers of two split into 8 linear sub-buckets,
// so a percentile is reported as its bucket's upper bound, at most 12.5%
// above the true value (exact below 8 ns); the maximum is tracked exactly.
// Values of 2^37 ns (about 137 s) and more share one overflow bucket, whose
// percentile is the exact maximum: no timer statistic needs finer detail up
// there.
//
// Size matters: every timer that has run keeps two of these. Counters are 32
// bits, so the whole histogram is about 1.1 KiB; when a bucket would
// overflow, every bucket is halved, which keeps the percentiles (relative
// counts) while the oldest samples weigh less. count() still counts every
// sample. No allocation after construction.
//
// Not thread-safe: the owner serializes access.

#ifndef TIMER_LATENCY_HISTOGRAM_H_
#define TIMER_LATENCY_HISTOGRAM_H_

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>

#include "absl/time/time.h"

namespace cyber {
namespace timer {

// Counter is the bucket counter type (uint32_t in LatencyHistogram; tests
// use a narrow one to exercise the halving).
template <typename Counter>
class BasicLatencyHistogram {
 public:
  void Record(absl::Duration d) { RecordNanoseconds(absl::ToInt64Nanoseconds(d)); }
  // Record(absl::Nanoseconds(ns)), for a caller that has the integer
  // already (a hot path's NanosecondsBetween, cyber/time/instant.h).
  void RecordNanoseconds(int64_t ns) {
    if (ns < 0) ns = 0;
    const uint64_t v = static_cast<uint64_t>(ns);
    Counter& bucket = buckets_[BucketOf(v)];
    if (bucket == std::numeric_limits<Counter>::max()) HalveAll();
    ++bucket;
    ++total_;
    ++count_;
    max_ = std::max(max_, v);
  }

  uint64_t count() const { return count_; }
  absl::Duration max() const { return absl::Nanoseconds(max_); }

  // The q-quantile (0 <= q <= 1), as its bucket's upper bound, capped at the
  // exact maximum. Zero when empty.
  absl::Duration Percentile(double q) const {
    if (count_ == 0) return absl::ZeroDuration();
    q = std::clamp(q, 0.0, 1.0);
    const uint64_t rank = std::max<uint64_t>(
        1, static_cast<uint64_t>(q * static_cast<double>(total_) + 0.999999));
    uint64_t seen = 0;
    for (int b = 0; b < kBuckets; ++b) {
      seen += buckets_[b];
      if (seen >= rank) {
        return absl::Nanoseconds(std::min(UpperBoundOf(b), max_));
      }
    }
    return absl::Nanoseconds(max_);
  }

  void Clear() { *this = BasicLatencyHistogram(); }

 private:
  static constexpr int kSubBits = 3;  // 8 sub-buckets per power of two
  static constexpr int kSub = 1 << kSubBits;
  static constexpr int kTopBits = 37;  // values below 2^37 ns are bucketed
  static constexpr int kOverflow = (kTopBits - kSubBits + 1) * kSub;
  static constexpr int kBuckets = kOverflow + 1;

  static int BucketOf(uint64_t v) {
    if (v < kSub) return static_cast<int>(v);
    if (v >> kTopBits) return kOverflow;
    const int msb = 63 - __builtin_clzll(v);  // >= kSubBits
    const int shift = msb - kSubBits;
    const int sub = static_cast<int>((v >> shift) & (kSub - 1));
    return (shift + 1) * kSub + sub;
  }
  static uint64_t UpperBoundOf(int b) {
    if (b < kSub) return static_cast<uint64_t>(b);
    if (b == kOverflow) return std::numeric_limits<uint64_t>::max();
    const int shift = b / kSub - 1;
    const uint64_t sub = static_cast<uint64_t>(b % kSub);
    const uint64_t lo = (uint64_t{kSub} + sub) << shift;
    return lo + ((uint64_t{1} << shift) - 1);
  }

  void HalveAll() {
    total_ = 0;
    for (Counter& b : buckets_) {
      b = static_cast<Counter>(b / 2);
      total_ += b;
    }
  }

  std::array<Counter, kBuckets> buckets_{};
  uint64_t total_ = 0;  // sum of buckets_ (below count_ after halving)
  uint64_t count_ = 0;
  uint64_t max_ = 0;
};

using LatencyHistogram = BasicLatencyHistogram<uint32_t>;

}  // namespace timer
}  // namespace cyber

#endif  // TIMER_LATENCY_HISTOGRAM_H_
