// LatencyRecorder and MeasurementWindow: how the scale run collects lateness
// from many callbacks at once, and only inside its measured window.
//
// Why: timer callbacks run concurrently on the scheduler's processor threads,
// while timer/latency_histogram.h is deliberately not thread-safe (each timer
// owns one). A LatencyRecorder is one such histogram behind a cyber::Mutex,
// plus the count of negative samples (a negative lateness is an early call:
// the histogram itself clamps it to zero, so it must be counted apart). At
// the rates of this tool (up to ~10^5 records per second) one uncontended
// lock per record costs well under 1% of a core, which is cheaper than the
// bookkeeping a per-thread merge would need.
//
// MeasurementWindow: the [begin, end) interval of steady-clock instants the
// run measures. Set once by the main thread, read by every callback; until
// set it contains nothing.
//
// Threads: all methods are thread-safe.

#ifndef TESTS_SCALE_LATENCY_RECORDER_H_
#define TESTS_SCALE_LATENCY_RECORDER_H_

#include <atomic>
#include <cstdint>
#include <limits>

#include "absl/base/thread_annotations.h"
#include "absl/time/time.h"
#include "cyber/common/mutex.h"
#include "cyber/time/instant.h"
#include "timer/latency_histogram.h"

namespace cyber {
namespace scale {

class LatencyRecorder {
 public:
  void Record(absl::Duration lateness) {
    MutexLock lock(&mu_);
    histogram_.Record(lateness);
    if (lateness < absl::ZeroDuration()) ++negative_;
  }

  timer::LatencyHistogram histogram() const {
    MutexLock lock(&mu_);
    return histogram_;
  }
  uint64_t negative() const {
    MutexLock lock(&mu_);
    return negative_;
  }

 private:
  mutable Mutex mu_;
  // mu_ protects the following state.
  timer::LatencyHistogram histogram_ ABSL_GUARDED_BY(mu_);
  uint64_t negative_ ABSL_GUARDED_BY(mu_) = 0;
};

class MeasurementWindow {
 public:
  void Open(Instant begin) { begin_ns_.store(ToNs(begin)); }
  void Close(Instant end) { end_ns_.store(ToNs(end)); }

  bool Contains(Instant t) const {
    const int64_t ns = ToNs(t);
    return ns >= begin_ns_.load(std::memory_order_relaxed) &&
           ns < end_ns_.load(std::memory_order_relaxed);
  }

 private:
  static int64_t ToNs(Instant t) {
    return absl::ToInt64Nanoseconds(t.SinceEpoch());
  }

  std::atomic<int64_t> begin_ns_{std::numeric_limits<int64_t>::max()};
  std::atomic<int64_t> end_ns_{std::numeric_limits<int64_t>::max()};
};

}  // namespace scale
}  // namespace cyber

#endif  // TESTS_SCALE_LATENCY_RECORDER_H_
